"""Files: safetensors weights, HF-layout checkpoint folders, and atomic writes."""
