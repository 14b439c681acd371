"""L0: the virtual GPU. Device catalogue, PTX front end, JIT, SIMT engine, memory, timing model."""
