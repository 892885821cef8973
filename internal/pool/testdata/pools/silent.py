# A pool that never says ready.
import time

time.sleep(60)
