"""The CDNA virtual GPU: AMDGPU code objects, the GFX9 decoder and the wave64 executor (docs/amd.md)."""
