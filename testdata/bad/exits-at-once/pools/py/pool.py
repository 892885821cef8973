# A pool that fails while it loads, before it is ready.
import sys

print("loading the model from weights.bin", file=sys.stderr)
print("FileNotFoundError: [Errno 2] No such file or directory: 'weights.bin'", file=sys.stderr)
sys.exit(1)
