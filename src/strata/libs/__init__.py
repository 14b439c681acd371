"""L4: math libraries (BLAS, DNN, solver) as CUDA kernels on the virtual GPU. Arrives with the math-libraries issue."""
