# A pool that fails while loading, before it is ready.
import sys

print("loading the model from weights.bin", file=sys.stderr)
print("FileNotFoundError: weights.bin", file=sys.stderr)
sys.exit(1)
