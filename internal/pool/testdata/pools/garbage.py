# A pool that answers with something that is not a frame.
import os

os.write(int(os.environ["NEXUS_POOL_OUT"]), b"\xff\xff\xff\xffnot a frame")
os.read(int(os.environ["NEXUS_POOL_IN"]), 1)
