"""Target devices: which one to use, what it is (name, arch, properties for the cost model), and flushing its caches."""
from __future__ import annotations
import ctypes, os, platform, functools, time
import numpy as np
from tinygrad import Device
from tinygrad.helpers import Target
from tinygrad.renderer import Renderer
from dataset.errors import one_line

DEVICES = ("CUDA", "CPU")

class DeviceError(RuntimeError): pass

@functools.cache
def available(name:str) -> bool:
  try: Device[name]
  except Exception: return False
  return True

def host_probe() -> float:
  """Seconds this host takes for a fixed pure-Python loop. A search is CPU-bound (model descents, compiles), and GPU-host calls
  land on hosts whose cores differ: on 2026-11-30 the same split's learned runs timed as many candidates in 1/1.7 the wall of an
  earlier call's, and seven calls read 0.126-0.267 s here. Results record it, so that a search wall set against another call's
  (BEAM=2's cached seconds) says how comparable the two hosts were."""
  t = time.perf_counter()
  sum(i*i for i in range(3_000_000))
  return round(time.perf_counter() - t, 3)

def default_device() -> str: return "CUDA" if available("CUDA") else "CPU"

def cuda_arch(index:int=0) -> str|None:
  """CUDA device `index`'s arch (sm_90) from the driver, without a context (no device is opened: a thread may ask while the
  program opens its own); None where there is no CUDA driver or device."""
  try:
    from tinygrad.runtime.autogen import cuda
    major, minor = ctypes.c_int(), ctypes.c_int()
    if cuda.cuInit(0) != 0 or cuda.cuDeviceComputeCapability(ctypes.byref(major), ctypes.byref(minor), index) != 0: return None
    return f"sm_{major.value}{minor.value}"
  except Exception: return None

def open_device(name:str):
  if name not in DEVICES: raise DeviceError(f"unknown device {name!r}: choose one of {', '.join(DEVICES)}")
  try: return Device[name]
  except Exception as e: raise DeviceError(f"device {name} is not available here ({one_line(e)})") from e

def renderer_for(device:str, arch:str|None=None, compiler:bool=True) -> Renderer:
  """The renderer kernels are scheduled with. With `arch` (e.g. sm_90) or no such device present, a CUDA renderer is built offline:
  it renders and compiles (NVRTC) without a GPU. With compiler=False it needs no NVRTC either: scheduling and featurizing only
  read the renderer's limits and tensor cores."""
  if device == "CUDA" and (arch is not None or not available("CUDA")):
    from tinygrad.renderer.cstyle import CUDARenderer, CStyleLanguage
    from tinygrad.codegen.opt import tc
    target = Target("CUDA", "", arch or "sm_90")
    if compiler: return CUDARenderer(target)
    ren = CUDARenderer.__new__(CUDARenderer)
    CStyleLanguage.__init__(ren, target)
    ren.compiler, ren.tensor_cores = None, tc.get_cuda(target.arch)
    return ren
  if device not in DEVICES: raise DeviceError(f"unknown device {device!r}: choose one of {', '.join(DEVICES)}")
  return open_device(device).renderer

def _cu_attr(dev, attr:int) -> int:
  from tinygrad.runtime.autogen import cuda
  v = ctypes.c_int32()
  cuda.cuDeviceGetAttribute(ctypes.byref(v), attr, dev.cu_device)
  return v.value

def device_info(device:str) -> tuple[str, str, dict]:
  """(device name, arch, properties): properties are cost-model inputs, so one feature schema spans devices."""
  d = open_device(device)
  if device == "CUDA":
    from tinygrad.runtime.autogen import cuda
    buf = ctypes.create_string_buffer(256)
    cuda.cuDeviceGetName(buf, 256, d.cu_device)
    sms, clk, mclk, bus, l2 = (_cu_attr(d, a) for a in (16, 13, 36, 37, 38))
    cc = (_cu_attr(d, 75), _cu_attr(d, 76))
    props = {"sm_count": sms, "clock_mhz": clk/1e3, "mem_bw_gbs": 2*mclk*1e3*bus/8/1e9, "l2_bytes": l2,
             "smem_per_block": _cu_attr(d, 97), "fp32_tflops": sms*128*2*clk*1e3/1e12,
             # dense fp16 tensor-core FLOP per clock per SM: 4096 on Hopper, 2048 on Ampere/Ada
             "fp16_tc_tflops": sms*(4096 if cc[0] >= 9 else 2048)*clk*1e3/1e12}
    return buf.value.decode(), f"sm_{cc[0]}{cc[1]}", props
  name = platform.processor() or platform.machine()
  try: name = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
  except (OSError, StopIteration): pass
  return name, platform.machine(), {"sm_count": os.cpu_count() or 1, "clock_mhz": 0.0, "mem_bw_gbs": 0.0, "l2_bytes": 0,
                                    "smem_per_block": 0, "fp32_tflops": 0.0, "fp16_tc_tflops": 0.0}

class L2Flush:
  """Evicts the last-level cache between timed runs. tinygrad's own clear writes 4 MB on CUDA, far less than a Hopper L2 (50-60 MB),
  so on CUDA a buffer of twice the L2 is memset; on the CPU a 64 MB host array is rewritten."""
  def __init__(self, device:str):
    self.device, self.d = device, Device[device]
    if device == "CUDA":
      from tinygrad.runtime.autogen import cuda
      self.l2_bytes = _cu_attr(self.d, 38)
      self.cuda, self.n = cuda, max(2*self.l2_bytes, 64 << 20)
      self.buf = self.d.allocator.alloc(self.n)
    else: self.host, self.l2_bytes = np.empty(64 << 20, dtype=np.uint8), 0
    self.i = 0
  def __call__(self):
    self.i += 1
    if self.device == "CUDA":
      self.cuda.cuCtxSetCurrent(self.d.context)
      self.cuda.cuMemsetD32_v2(self.buf, self.i, self.n//4)
    else: self.host.fill(self.i & 0xff)
  @classmethod
  def shared(cls, device:str) -> L2Flush:
    """One per device and process: its 100+ MB device buffer is never freed, and a search of a network makes a Measurer per kernel."""
    if (f := _FLUSHES.get(device)) is None: f = _FLUSHES[device] = cls(device)
    return f
_FLUSHES: dict[str, L2Flush] = {}
