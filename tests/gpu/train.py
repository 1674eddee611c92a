"""train.py - a small PyTorch training loop for the GPU capture check.

usage: python train.py MODE STEPS OUT
  MODE plain      no profiler (also the run under gtrace)
       torchprof  torch.profiler on the same loop; writes per-kernel-name
                  count and total ns from its CUDA kernel events to OUT
Always prints 'step_ms MEDIAN' (median step time after 10 warm-up steps) and
'window_ns T0 T1': CLOCK_REALTIME around the measured steps (the GPU is idle
at both ends), so a capture from process start can be cut to the same steps
torch.profiler sees.
"""
import json, statistics, sys, time
import torch

mode, steps, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
torch.manual_seed(0)
dev = "cuda"
model = torch.nn.Sequential(
    torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
    torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
    torch.nn.Linear(4096, 1024)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(256, 1024, device=dev)
y = torch.randn(256, 1024, device=dev)

def step():
    opt.zero_grad(set_to_none=False)
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()

for _ in range(10):
    step()
torch.cuda.synchronize()

times = []
window = [0, 0]
def run():
    window[0] = time.time_ns()
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    window[1] = time.time_ns()

if mode == "torchprof":
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        run()
    agg = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA and not e.name.startswith(("Memcpy", "Memset")):
            c = agg.setdefault(e.name, [0, 0])
            c[0] += 1
            c[1] += int(e.device_time_total * 1000)   # us -> ns
    with open(out, "w") as f:
        json.dump(agg, f)
else:
    run()
print("step_ms %.4f" % statistics.median(times))
print("window_ns %d %d" % (window[0], window[1]))
