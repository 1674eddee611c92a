#!/usr/bin/env python3
"""tui_tmux.py CASE - drive the real `gtrace open` in a detached tmux pane
(new-session -x 120 -y 40, send-keys, capture-pane -p) and check what the
terminal shows.  Each CASE is one meson test, written once: a case_NAME
function here.  `tui_tmux.py --list GROUP` prints the cases of a group, one
a line, and the meson files register them from it at configure time (tui-NAME):
viewer (every case not marked otherwise; tests/tui/meson.build), net
(tests/tui/meson.build, no live driver), cudaemu (tests/cudaemu/meson.build,
the emulator's trainer) and capture (tests/capture/meson.build); @group
marks a case's group.  Exit 77 (skip) when tmux is
not installed or a trace of ../shared/testdata the case needs is absent
(need_testdata: a failure instead when GTRACE_REQUIRE_TESTDATA is set).

Expected values come from planted scenarios (the simulator's input-bound
scenario is input-bound by construction), from ../shared/testdata/MANIFEST.md
(counts over the raw JSON), or from one screen compared with another (the
instance row chosen in the kernel page must be the event the trace view then
shows).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

BUILD = os.environ.get("GTRACE_BUILD", "build")
TESTDATA = os.environ.get("GTRACE_TESTDATA", "../shared/testdata")
GTRACE = os.path.join(BUILD, "tui", "gtrace")
SOCK = "gtrace-tui-%d" % os.getpid()
TMP = tempfile.mkdtemp(prefix="gtrace-tui-")
# each case gets its own tmux server directory, so cases run in parallel never share one
os.environ["TMUX_TMPDIR"] = TMP
RESNET = os.path.join(TESTDATA, "kineto", "resnet50_num_workers_0.pt.trace.json.gz")


GROUPS = {}   # case name -> its meson group, when not "viewer"


def group(name):
    """decorator: the meson group of a case_NAME function (see the docstring)"""
    def mark(f):
        GROUPS[f.__name__[len("case_"):]] = name
        return f
    return mark


def skip(msg):
    print("SKIP: " + msg)
    sys.exit(77)


def need_testdata(path):
    """return when path (under ../shared/testdata) exists; otherwise skip the case
    (exit 77, counted as skipped), or fail when GTRACE_REQUIRE_TESTDATA is set (CI)"""
    if os.path.exists(path):
        return
    if os.environ.get("GTRACE_REQUIRE_TESTDATA", "0") not in ("", "0"):
        fail("test data missing and GTRACE_REQUIRE_TESTDATA is set: " + path)
    skip("test data missing: %s (the traces of ../shared/testdata are not beside this clone)" % path)


def fail(msg, screen=None):
    print("FAIL: " + msg)
    if screen is not None:
        print("---- screen ----\n" + screen + "\n----------------")
    sys.exit(1)


def tmux(*args, check=True):
    r = subprocess.run(["tmux", "-L", SOCK] + list(args), capture_output=True, text=True)
    if check and r.returncode:
        fail("tmux %s: %s" % (" ".join(args), r.stderr.strip()))
    return r.stdout


def screen():
    return tmux("capture-pane", "-p", "-t", "t")


def settled(s, pattern, absent, limit=1.5):
    """a frame can be captured while the terminal is still receiving it (a slow
    machine shows half a screen): once the pattern holds, capture again until
    two captures 80 ms apart agree, or until limit seconds pass (a live view
    never stops changing), and return the last capture that still satisfies
    the pattern"""
    end = time.time() + limit
    while time.time() < end:
        time.sleep(0.08)
        t = screen()
        if (re.search(pattern, t, re.M) is not None) == absent:
            return s
        if t == s:
            return t
        s = t
    return s


def wait_for(pattern, timeout=10.0, absent=False):
    """wait until the regex matches the pane (or stops matching); return the pane"""
    end = time.time() + timeout
    s = ""
    while time.time() < end:
        s = screen()
        found = re.search(pattern, s, re.M) is not None
        if found != absent:
            return settled(s, pattern, absent)
        time.sleep(0.05)
    fail("%s /%s/ on screen" % ("still" if absent else "never saw", pattern), s)


def keys(*ks, settle=0.15):
    for k in ks:
        tmux("send-keys", "-t", "t", k)
        time.sleep(0.03)
    time.sleep(settle)


def type_text(text):
    tmux("send-keys", "-t", "t", "-l", text)
    time.sleep(0.05)


def clear_msg():
    """a message takes precedence in the status line: open and close the help
    (keys that change nothing) so that the next frame shows the fixed fields"""
    keys("?", "?")


def search_to(regex):
    """`/` search for an exact name (regex ^name$) and wait until the detail
    pane shows that event; return the screen"""
    keys("/")
    type_text(regex)
    keys("Enter")
    return wait_for(r"\] %s\b" % re.escape(regex.strip("^$")))


def start(path, w=120, h=40, env="LANG=C.UTF-8 TERM=xterm-256color"):
    """run gtrace open PATH in a new session; EXIT=<status> is printed after it ends"""
    cmd = "env %s %s open %s; echo EXIT=$?; sleep 600" % (env, os.path.abspath(GTRACE), path)
    # a loaded machine can lose the race to start the tmux server; try again
    for attempt in range(3):
        r = subprocess.run(["tmux", "-L", SOCK, "-f", "/dev/null", "new-session", "-d", "-s", "t",
                            "-x", str(w), "-y", str(h), cmd], capture_output=True, text=True)
        if r.returncode == 0:
            break
        tmux("kill-server", check=False)   # a half-started server would say "duplicate session"
        time.sleep(0.3)
    else:
        fail("tmux new-session: %s" % r.stderr.strip())
    tmux("set-option", "-t", "t", "status", "off", check=False)
    tmux("resize-window", "-t", "t", "-x", str(w), "-y", str(h), check=False)


def quit_ok():
    keys("q")
    s = wait_for(r"^EXIT=\d+", 10)
    if "EXIT=0" not in s:
        fail("gtrace did not exit with 0", s)
    if "1 Trace" in s:
        fail("the viewer's screen is still shown after quitting", s)
    return s


def sim(scenario="input-bound", gpus=2, steps=10):
    path = os.path.join(TMP, "%s.gtrace" % scenario)
    r = subprocess.run([GTRACE, "sim", "--force", "-o", path, "--gpus", str(gpus), "--steps", str(steps),
                        "--scenario", scenario], capture_output=True, text=True)
    if r.returncode:
        fail("gtrace sim failed: " + (r.stderr.strip() or r.stdout.strip()))
    return path


def resnet():
    need_testdata(RESNET)
    r = subprocess.run([GTRACE, "stats", RESNET, "--report", "kernels", "--format", "csv"],
                       capture_output=True, text=True)
    if r.returncode:
        fail("the Kineto importer does not load %s: %s" % (RESNET, r.stderr.strip()))
    return RESNET


def table_rows(s):
    """data rows of the stats table: lines after the header that start with a number"""
    lines = s.splitlines()
    hdr = next((i for i, l in enumerate(lines) if "Total Time" in l), None)
    if hdr is None:
        fail("no table header", s)
    rows = []
    for l in lines[hdr + 1:]:
        m = re.match(r"\s*([0-9.]+)\s+(\S+)\s+(\d+)\s", l)
        if not m:
            break
        rows.append((float(m.group(1)), m.group(2), int(m.group(3)), l))
    return rows


# ---- cases ----

def case_trace():
    start(sim())
    s = wait_for(r"GPU 0")
    for want in ("GPU 1", "compute", "NCCL", "copy", "host", "1 col=", "steps", "#0",
                 "dropped 0", " ev ", "memset"):
        if want not in s:
            s = wait_for(re.escape(want), timeout=5)
    if "\u2588" not in s and "\u2581" not in s:
        fail("no eighth blocks in a UTF-8 locale", s)
    # the compute stream of GPU 0 is the second row; ] selects its first event in view
    keys("j", "]")
    s = wait_for(r"start \+[0-9.]+m?s\s+dur ")
    # a GEMM kernel by search
    keys("/")
    type_text("gemm")
    keys("Enter")
    s = wait_for(r"\[kernel\] \S*gemm")
    if "grid (" not in s or "registers" not in s:
        fail("detail pane lacks the launch configuration", s)
    # kernel -> launching call -> back
    keys("c")
    s = wait_for(r"\[cuda_runtime\] cudaLaunchKernel")
    keys("c")
    s = wait_for(r"launched by cudaLaunchKernel")
    # zoom in/out and fit keep the view alive; status shows the range
    keys("w", "w", "s", "+", "-", "f")
    wait_for(r"view \+")
    # search: regex over names, n / N
    keys("/")
    type_text("^ncclDev")
    keys("Enter")
    s = wait_for(r"^ \[kernel, NCCL\] ncclDevKernel")
    t1 = re.search(r"start \+(\S+)", s).group(1)
    keys("n")
    s = wait_for(r"start \+(?!%s)" % re.escape(t1))
    if "nccl" not in s.lower():
        fail("n did not land on the next NCCL kernel", s)
    keys("N")
    wait_for(r"start \+%s" % re.escape(t1))
    # go to a time
    keys("g")
    type_text("300ms")
    keys("Enter")
    wait_for(r"view \+2\d\d\.?\d*ms|view \+3\d\d\.?\d*ms")
    # mark a range: aggregate with busy per lane and top kernels
    keys("f", "m", "L", "L", "L", "m")
    s = wait_for(r"range \+")
    if "busy" not in s or "top kernels" not in s:
        fail("range aggregate lacks busy time or top kernels", s)
    keys("Escape")
    wait_for(r"range \+", absent=True)
    # fold all and unfold all
    keys("o")
    s = wait_for(r"\u25b8GPU 0")
    if "stream" in s.split("legend")[0] and re.search(r"^\s*stream \d+", s, re.M):
        fail("folded groups still show their streams", s)
    keys("O")
    wait_for(r"\u25beGPU 0")
    # help
    keys("?")
    wait_for(r"keys: Trace")
    keys("Escape")
    wait_for(r"keys: Trace", absent=True)
    quit_ok()


def case_kernels():
    start(sim())
    wait_for(r"GPU 0")
    keys("2")
    s = wait_for(r"Total Time")
    for want in ("kernels", "memory", "nccl", "Time (%)", "Instances", "Avg", "Med", "Min",
                 "Max", "StdDev", "Name", "all GPUs"):
        if want not in s:
            fail("kernel page lacks '%s'" % want, s)
    rows = table_rows(s)
    if len(rows) < 5:
        fail("too few rows", s)
    # duration cells carry their unit ("80.8ms"), so no heading may claim "(ns)"
    if "(ns)" in s:
        fail("a heading says (ns) over cells printed with units", s)
    pct = [r[0] for r in rows]
    if pct != sorted(pct, reverse=True):
        fail("not sorted by total time, largest first", s)
    # reverse
    keys("r")
    s = wait_for(r"Total Time \u25b2")
    pct = [r[0] for r in table_rows(s)]
    if pct != sorted(pct):
        fail("r did not reverse the order", s)
    # sort by the next column (Instances), descending
    keys(">")
    s = wait_for(r"Instances \u25bc")
    inst = [r[2] for r in table_rows(s)]
    if inst != sorted(inst, reverse=True):
        fail("not sorted by Instances", s)
    # filter by name
    keys("/")
    type_text("nccl")
    keys("Enter")
    s = wait_for(r"filter /nccl/")
    rows = table_rows(s)
    if not rows or any("nccl" not in r[3].lower() for r in rows):
        fail("filter kept rows without 'nccl'", s)
    keys("Escape")
    wait_for(r"filter /nccl/", absent=True)
    # per GPU
    keys("G")
    wait_for(r"GPU 0\s+\|")
    keys("G")
    wait_for(r"GPU 1\s+\|")
    keys("G")
    wait_for(r"all GPUs")
    # the other tables
    keys("t")
    s = wait_for(r"\|\s+\d+ of \d+ rows|not available")
    keys("t")
    s = wait_for(r"\|\s+\d+ of \d+ rows|not available")
    quit_ok()


def case_drilldown():
    start(sim())
    wait_for(r"GPU 0")
    keys("2")
    wait_for(r"Total Time")
    keys("j", "Enter")
    s = wait_for(r"instances of")
    title = re.search(r"instances of (.*)", s).group(1).strip()
    if not re.search(r"\d+\s+instances\s+total", s):
        fail("no instance summary", s)
    if not re.search(r"\.\.\S+\s+\d+\s+\S", s):
        fail("no duration histogram", s)
    # second instance (sorted by duration): its start and duration
    keys("j")
    s = wait_for(r"^\s+2\s+(\S+)\s+(\S+)\s+rank (\d+) GPU (\d+) stream (\d+)")
    m = re.search(r"^\s+2\s+(\S+)\s+(\S+)\s+rank (\d+) GPU (\d+) stream (\d+)", s, re.M)
    if not m:
        fail("no instance row 2", s)
    start_s, dur_s = m.group(1), m.group(2)
    keys("Enter")
    s = wait_for(r"start \+")
    if "start +%s  dur %s" % (start_s, dur_s) not in s:
        fail("trace view shows another event than instance 2 (%s, %s)" % (start_s, dur_s), s)
    if title[:40] not in s:
        fail("trace view's detail lacks the kernel name '%s'" % title[:40], s)
    if not re.search(r"GPU %s stream %s" % (m.group(4), m.group(5)), s):
        fail("selected event is on another stream", s)
    # by time, then back with Esc
    keys("2")
    s = wait_for(r"instances of")
    keys("T")
    s = wait_for(r"sorted by time")
    starts = re.findall(r"^\s+\d+\s+([0-9.]+)ms\s", s, re.M)
    vals = [float(x) for x in starts]
    if len(vals) < 3 or vals != sorted(vals):
        fail("instances not in time order", s)
    keys("Escape")
    wait_for(r"Total Time")
    quit_ok()


def case_pipeline():
    start(sim("input-bound"))
    wait_for(r"GPU 0")
    keys("3")
    s = wait_for(r"Verdict: ")
    # planted: the input-bound scenario waits for its data loader every step
    if "HIGHLY input-bound" not in s and "MODERATELY input-bound" not in s:
        fail("input-bound scenario not found input-bound", s)
    # planted: the data loader is the dominant host cost, and the headline names it
    if "largest non-GPU cost: input," not in s:
        fail("the verdict line does not name input as the largest non-GPU cost", s)
    for want in ("step 0", "What to try", "Worst steps", "Device compute"):
        if want not in s:
            fail("pipeline page lacks '%s'" % want, s)
    keys("j", "j", "Enter")
    s = wait_for(r"1 col=")
    if "view +" not in s:
        fail("Enter on a step did not open the trace view", s)
    # the view spans step 2 (5 % margins): its boundary is the first on the step row
    steps = re.search(r"^steps\s+(.*)$", s, re.M)
    if not steps or not re.match(r"\|#2\b", steps.group(1).strip()):
        fail("trace view not zoomed to step 2", s)
    quit_ok()
    tmux("kill-server", check=False)
    start(sim("balanced"))
    wait_for(r"GPU 0")
    keys("3")
    s = wait_for(r"Verdict: ")
    if "NOT input-bound" not in s:
        fail("balanced scenario not found 'NOT input-bound'", s)
    quit_ok()


def case_overview():
    start(sim("input-bound"))
    wait_for(r"GPU 0")
    keys("4")
    s = wait_for(r"Recommendations")
    for want in ("Environment", "Average step", "GPU utilization", "Top kernels", "r0 GPU 0",
                 "r0 GPU 1", "input-bound", "largest non-GPU cost: input,",
                 "collectives (total kernel time"):
        if want not in s:
            fail("overview lacks '%s'" % want, s)
    keys("Enter")
    wait_for(r"Verdict: ")
    keys("Escape")
    wait_for(r"Recommendations")
    quit_ok()
    # planted straggler: one GPU slower every step
    tmux("kill-server", check=False)
    start(sim("straggler", gpus=4))
    wait_for(r"GPU 0")
    keys("4")
    s = wait_for(r"Multi-GPU health")
    if not re.search(r"^\s+straggler: rank \d+ GPU \d+", s, re.M):
        fail("straggler scenario: no straggler in the health section", s)
    m = re.search(r"^\s+(!!|! |- ) \[straggler\]", s, re.M)
    if not m:
        fail("straggler scenario: no straggler recommendation", s)
    recs = re.findall(r"^\s+(?:!!|! |- ) \[([a-z-]+)\]", s, re.M)
    for _ in range(recs.index("straggler")):
        keys("j")
    keys("Enter")
    s0 = s
    s = wait_for(r"1 col=")
    if "evidence: straggler" not in s:
        fail("Enter on the straggler recommendation did not show the trace", s)
    # the cursor lands on the straggler GPU's lane (the one the health line names)
    g = re.search(r"straggler: rank (\d+) GPU (\d+)", s0)
    if not re.search(r"cursor on rank %s GPU %s\b" % g.groups(), s):
        fail("straggler evidence: cursor not on rank %s GPU %s" % g.groups(), s)
    # as README says: the trace over the steps it cites (all of its rank's: sim --steps 10 plants 0-9)
    if not re.search(r"evidence: straggler, steps 0-9, cursor", s):
        fail("straggler evidence: the status does not name its rank's steps 0-9", s)
    d = re.search(r" on rank (\d+) GPU (\d+) stream", s)
    if d and d.groups() != g.groups():
        fail("straggler evidence: selected event on another GPU", s)
    quit_ok()


def open_logged(path, w=120):
    """open PATH with the loading line shown at once (GTRACE_PROGRESS_DELAY_MS=0)
    and everything the terminal receives logged; wait for the viewer and
    return (screen, the log as text)"""
    log = os.path.join(TMP, "pane.log")
    cmd = "sleep 0.5; env LANG=C.UTF-8 TERM=xterm-256color GTRACE_PROGRESS_DELAY_MS=0 GTRACE_OPEN_WHOLE=1 %s open %s; " \
          "echo EXIT=$?; sleep 600" % (os.path.abspath(GTRACE), path)
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", str(w), "-y", "40", cmd)
    tmux("pipe-pane", "-o", "-t", "t", "cat >> %s" % log)
    s = wait_for(r"1 Trace", 60)
    return s, open(log, "rb").read().decode("utf-8", "replace")


def case_bigload():
    """a capture that takes a while to load shows a live 'loading' line, not a frozen screen"""
    path = os.path.join(TMP, "big.gtrace")
    r = subprocess.run([GTRACE, "sim", "--force", "-o", path, "--events", "1M"], capture_output=True, text=True)
    if r.returncode:
        fail("gtrace sim failed: " + r.stderr.strip())
    # the delay is 0.3 s normally; 0 here so that the line is written before the first wait
    s, out = open_logged(path)
    lines = re.findall(r"gtrace: loading big\.gtrace \(\d+\.\d MB\) +(\d+) % . \d+\.\d s", out)
    if not lines:
        fail("no 'loading' line with a percentage before the viewer: %r" % out[:300], s)
    pct = [int(p) for p in lines]
    if pct != sorted(pct) or pct[-1] > 100:
        fail("the loading percentage goes backwards or past 100: %r" % pct, s)
    quit_ok()


def case_steps():
    """2 ranks: one step marker per step number (the simulator plants steps 0..19),
    each labelled; ruler labels are whole (none cut at the right edge)"""
    path = os.path.join(TMP, "ranks.gtrace")
    r = subprocess.run([GTRACE, "sim", "--force", "-o", path, "--scenario", "straggler", "--gpus", "2",
                        "--ranks", "2", "--steps", "20"], capture_output=True, text=True)
    if r.returncode:
        fail("gtrace sim failed: " + r.stderr.strip())
    start(path, 120, 30)
    s = wait_for(r"^steps\s+\|#0")
    row = re.search(r"^steps\s+(.*)$", s, re.M).group(1)
    if "||" in row or re.search(r"\|\s+\|", row):
        fail("step row has markers without labels (other ranks' copies of a step)", s)
    nums = [int(x) for x in re.findall(r"#(\d+)", row)]
    if nums != list(range(20)):
        fail("step row labels %s, want 0..19" % nums, s)
    # zoom in a few times: every ruler label is a whole time with a unit
    for _ in range(6):
        keys("w")
        ruler = re.search(r"^1 col=\S+\s+(.*)$", screen(), re.M).group(1)
        for lab in ruler.split("|")[1:]:
            if lab.strip() and not re.fullmatch(r"\d+(\.\d+)?(ns|us|ms|s)\s*", lab):
                fail("ruler label %r is cut or has no unit" % lab, screen())
    # 2 ranks: the kernel page's GPU scope says it takes GPU 0 of each rank
    keys("2")
    wait_for(r"Total Time")
    keys("G")
    wait_for(r"GPU 0 of every rank\s+\|")
    quit_ok()


def case_envgpus():
    """the overview lists the GPUs the trace ran on, not every GPU of the machine:
    the nsys export describes GPUs 0-3 (TARGET_INFO_GPU) but its kernels all ran on
    device 0 (sqlite3: SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL -> 0)"""
    nsys = os.path.join(TESTDATA, "nsys", "a100_cloverleaf.nsys.sqlite")
    need_testdata(nsys)
    start(nsys)
    wait_for(r"GPU 0")
    keys("4")
    s = wait_for(r"Recommendations")
    env = s[s.index("Environment"):s.index("Average step")]
    if not re.search(r"^\s+GPU 0: NVIDIA A100-SXM4-80GB, 108 SMs", env, re.M):
        fail("overview lacks GPU 0's description", s)
    if re.search(r"GPUs? [1-3]\b", env):
        fail("overview lists a GPU the trace has no activity on", s)
    quit_ok()
    tmux("kill-server", check=False)
    # 2 ranks x 4 alike GPUs: one line per rank
    path = os.path.join(TMP, "env2.gtrace")
    r = subprocess.run([GTRACE, "sim", "--force", "-o", path, "--gpus", "4", "--ranks", "2"],
                       capture_output=True, text=True)
    if r.returncode:
        fail("gtrace sim failed: " + r.stderr.strip())
    start(path)
    wait_for(r"GPU 0")
    keys("4")
    s = wait_for(r"Recommendations")
    for rk in (0, 1):
        if not re.search(r"^\s+GPUs 0-3 \(rank %d\): " % rk, s, re.M):
            fail("overview lacks the GPUs of rank %d" % rk, s)
    quit_ok()


def case_detail():
    """the detail pane of a real copy: the first 'Memcpy HtoD' of the HTA A100 trace is,
    by python over the raw JSON (earliest X event with that name), at +11.219 ms from
    the first X event, dur 10 us, 147456 bytes, on device 0 stream 25, correlation 824980"""
    path = os.path.join(TESTDATA, "hta", "a100_16rank_rank0.json.gz")
    need_testdata(path)
    start(path)
    wait_for(r"GPU 0")
    keys("/")
    type_text("Memcpy HtoD")
    keys("Enter")
    s = wait_for(r"\[memcpy\] Memcpy HtoD")
    for want in ("start +11.219ms", "dur 10.0us", "bytes 144.0 KiB", "bandwidth 14.75 GB/s",
                 "on rank 0 GPU 0 stream 25", "correlation 824980"):
        if want not in s:
            fail("detail pane lacks '%s'" % want, s)
    if "GPU 0 GPU 0" in s:
        fail("detail pane names the GPU twice", s)
    # c: to the launching runtime call and back
    keys("c")
    s = wait_for(r"\[cuda_runtime\] cudaMemcpyAsync")
    if "correlation 824980" not in s:
        fail("c did not land on the launching call", s)
    keys("c")
    wait_for(r"\[memcpy\] Memcpy HtoD")
    quit_ok()


def case_homeend():
    """Home/End as tmux sends them (ESC [1~ / ESC [4~) with TERM=xterm-256color, whose
    terminfo says ESC OH / ESC OF: the capture's start and end all the same"""
    start(sim("balanced", gpus=2, steps=10))
    wait_for(r"GPU 0")
    keys("w", "w", "w", "w")
    keys("End")
    s = wait_for(r"view \+\S+ \(")
    m = re.search(r"view \+(\S+) \(", s)
    if m.group(1) == "0ns" or "1 col=" not in s:
        fail("End did not move the view to the end", s)
    if "mark" in s:
        fail("End was read as Esc + keys", s)
    keys("Home")
    wait_for(r"view \+0ns \(")
    # g past the end: says so and shows the end, not an empty screen 1e5 s away
    keys("g")
    type_text("99999s")
    keys("Enter")
    s = wait_for(r"outside the capture")
    clear_msg()
    s = wait_for(r"dropped .* view \+")
    unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
    m = re.search(r"\| ([0-9.]+)(ns|us|ms|s) \| dropped .* view \+([0-9.]+)(ns|us|ms|s) \(", s)
    if not m or float(m.group(3)) * unit[m.group(4)] > float(m.group(1)) * unit[m.group(2)]:
        fail("g 99999s moved the view off the capture", s)
    quit_ok()


def case_tabs():
    """the tab line never covers a tab's name with the key hint (at 100 columns it did:
    '4 Overvie? help')"""
    start(sim(), 100, 24)
    wait_for(r"GPU 0")
    for w in (100, 101, 104, 108, 110, 120, 200):
        tmux("resize-window", "-t", "t", "-x", str(w), "-y", "24")
        time.sleep(0.25)
        top = screen().splitlines()[0]
        if "4 Overview" not in top:
            fail("at %d columns the tab line reads %r" % (w, top))
        if w >= 120 and "? help  q quit" not in top:
            fail("at %d columns no key hint: %r" % (w, top))
    quit_ok()


def case_utilagree():
    """the overview's per-GPU percentages are the busy shares `gtrace stats --report
    overview` prints for the same file (one screen compared with the other tool's)"""
    path = os.path.join(TMP, "util.gtrace")
    r = subprocess.run([GTRACE, "sim", "--force", "-o", path, "--scenario", "straggler", "--gpus", "4",
                        "--ranks", "2"], capture_output=True, text=True)
    if r.returncode:
        fail("gtrace sim failed: " + r.stderr.strip())
    r = subprocess.run([GTRACE, "stats", path, "--report", "overview", "--format", "csv",
                        "--table", "overview_gpus"], capture_output=True, text=True)
    lines = r.stdout.splitlines()
    hdr = next((i for i, l in enumerate(lines) if l.startswith("Rank,GPU,Busy (%)")), None)
    if r.returncode or hdr is None:
        fail("gtrace stats printed no per-GPU busy table: " + r.stderr.strip())
    want = {}
    for l in lines[hdr + 1:]:
        f = l.split(",")
        if len(f) < 3 or not f[0].isdigit():
            break
        want[(int(f[0]), int(f[1]))] = float(f[2])
    start(path)
    wait_for(r"GPU 0")
    keys("4")
    s = wait_for(r"Recommendations")
    got = {(int(a), int(b)): float(c) for a, b, c in
           re.findall(r"^\s+r(\d+) GPU (\d+)\s+([0-9.]+)%", s, re.M)}
    if set(got) != set(want):
        fail("overview GPUs %s, stats %s" % (sorted(got), sorted(want)), s)
    for k, v in want.items():
        if abs(got[k] - v) > 0.051:
            fail("r%d GPU %d: overview %.1f%%, stats %.2f%%" % (k[0], k[1], got[k], v), s)
    quit_ok()


def case_memdrill():
    """Enter on a memory-table row lists that kind's copies: ResNet-50 (workers 0) has 12
    Memcpy events, all 'Memcpy HtoD (Pageable -> Device)', the longest 1,946 us (python over
    the raw JSON: ph X, cat Memcpy); Enter on the first lands on that copy"""
    path = resnet()
    start(path)
    wait_for(r"GPU 0", 30)
    keys("2")
    wait_for(r"Total Time")
    keys("t")
    s = wait_for(r"\[CUDA memcpy Host-to-Device\]")
    keys("Enter")
    s = wait_for(r"instances of \[CUDA memcpy Host-to-Device\]")
    if not re.search(r"^ 12 instances .* max 1\.95ms", s, re.M):
        fail("memory drill-down: want 12 instances, max 1.95ms", s)
    keys("Enter")
    s = wait_for(r"\[memcpy\] Memcpy HtoD \(Pageable -> Device\)")
    if "dur 1.95ms" not in s:
        fail("memory drill-down landed on another copy", s)
    quit_ok()


def case_nccldrill():
    """Enter on an nccl-table row lists the kernels of that collective and size: the HTA
    nccl_data trace has 3 allreduce kernels of 2,049,000 Float elements (8,196,000 bytes),
    durations 2,520.607 / 3,306.963 / 5,993.392 us (python over the raw JSON: ph X, cat
    kernel, args 'In msg nelems' == 2049000)"""
    path = os.path.join(TESTDATA, "hta", "nccl_data.json.gz")
    need_testdata(path)
    start(path)
    wait_for(r"GPU 0", 30)
    keys("2")
    wait_for(r"Total Time")
    keys("t", "t")
    s = wait_for(r"Collective")
    lines = s.splitlines()
    hdr = next(i for i, l in enumerate(lines) if "Collective" in l)
    row = next((i - hdr - 1 for i, l in enumerate(lines[hdr + 1:], hdr + 1)
                if re.search(r"\b8196000\b", l)), None)
    if row is None:
        fail("nccl table lacks the 8196000-byte allreduce", s)
    for _ in range(row):
        keys("j")
    keys("Enter")
    s = wait_for(r"instances of allreduce, 8196000 bytes")
    if not re.search(r"^ 3 instances .* min 2\.52ms .* max 5\.99ms", s, re.M):
        fail("nccl drill-down: want 3 instances, 2.52ms..5.99ms", s)
    keys("Enter")
    s = wait_for(r"\[kernel, NCCL\]")
    if "dur 5.99ms" not in s or "in 2049000 elems" not in s:
        fail("nccl drill-down landed on another kernel", s)
    quit_ok()


def case_resize():
    start(sim(), 120, 40)
    wait_for(r"GPU 0")
    for (w, h) in ((80, 24), (20, 5), (10, 3), (1, 1), (200, 60), (40, 10), (120, 40)):
        tmux("resize-window", "-t", "t", "-x", str(w), "-y", str(h))
        time.sleep(0.2)
        for view in "1234":
            keys(view, "j", "Enter", "w", "?", "Escape", settle=0.05)
        keys("1", "Escape", "Escape", settle=0.1)
    s = screen()
    if "EXIT=" in s:
        fail("gtrace ended while resizing", s)
    keys("1")
    wait_for(r"GPU 0")
    quit_ok()


def case_tiny():
    start(sim(), 20, 5)
    time.sleep(0.8)
    for k in ("j", "w", "2", "Enter", "Enter", "3", "Enter", "4", "Enter", "?", "/", "x"):
        keys(k, settle=0.05)
    keys("Enter", "Escape", "Escape")
    s = screen()
    if "EXIT=" in s:
        fail("gtrace ended in a 20x5 terminal", s)
    quit_ok()


def case_ascii():
    start(sim(), env="LANG=C LC_ALL=C TERM=vt100")
    s = wait_for(r"GPU 0")
    if any(ord(c) > 127 for c in s):
        fail("non-ASCII output with LANG=C", s)
    if not re.search(r"[#%]{3}", s):
        fail("no ASCII lane glyphs", s)
    if "+GPU" not in s and "-GPU" not in s:
        fail("no ASCII fold markers", s)
    keys("2")
    wait_for(r"Total Time")
    keys("4")
    s = wait_for(r"Recommendations")
    if any(ord(c) > 127 for c in s):
        fail("non-ASCII overview with LANG=C", s)
    quit_ok()
    tmux("kill-server", check=False)
    start(sim(), env="LANG=C.UTF-8 TERM=xterm")   # 8 colours
    wait_for(r"GPU 0")
    quit_ok()
    # 80x24 with a long path: the status line keeps the visible range (the
    # source shortens to its last component instead of pushing the range off)
    tmux("kill-server", check=False)
    deep = os.path.join(TMP, "a-rather-long-directory-name-for-the-status-line", "more")
    os.makedirs(deep, exist_ok=True)
    path = os.path.join(deep, "input-bound.gtrace")
    shutil.copy(sim(), path)
    start(path, 80, 24, env="LANG=C TERM=vt100")
    s = wait_for(r"GPU 0")
    last = s.rstrip("\n").splitlines()[-1]
    if not re.search(r"input-bound\.gtrace \| .* \| view \+\S+ \(\S+\)", last):
        fail("80 columns: status line lost the range", s)
    quit_ok()


def case_real():
    path = resnet()
    start(path)
    s = wait_for(r"GPU 0", 30)
    # MANIFEST.md: one GPU lane with kernels
    if not re.search(r"^ (stream 7|s7) compute", s, re.M):
        fail("no compute stream for the ResNet-50 trace", s)
    keys("2")
    s = wait_for(r"Total Time")
    # MANIFEST.md: 67 distinct kernel names in this trace
    if not re.search(r"\b67 of 67 rows", s):
        fail("kernel table does not hold the 67 kernel names of the trace", s)
    keys("3")
    s = wait_for(r"Verdict: ")
    # TensorBoard plugin's numbers: DataLoader 59,262 of a 177,592 us step = 33 % input
    if "HIGHLY input-bound" not in s:
        fail("ResNet-50 with 0 workers should be HIGHLY input-bound", s)
    # DataLoader 59,262 us is the largest host cost (CPU Exec 13,674, Runtime 2,908)
    if "largest non-GPU cost: input," not in s:
        fail("ResNet-50's largest non-GPU cost should be input", s)
    quit_ok()


def case_errors():
    r = subprocess.run([GTRACE, "open", os.path.join(TMP, "missing.json")], capture_output=True,
                       text=True, stdin=subprocess.DEVNULL)
    if r.returncode != 1 or "missing.json" not in r.stderr:
        fail("missing file: exit %d, stderr %r" % (r.returncode, r.stderr))
    r = subprocess.run([GTRACE, "open"], capture_output=True, text=True)
    if r.returncode != 2:
        fail("no path: exit %d" % r.returncode)
    path = sim()
    r = subprocess.run([GTRACE, "open", path], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    if r.returncode != 1 or "terminal" not in r.stderr:
        fail("not a terminal: exit %d, stderr %r" % (r.returncode, r.stderr))
    # no terminal is found out before loading: a cut-off capture is not even read
    cut = os.path.join(TMP, "cut.gtrace")
    with open(path, "rb") as f, open(cut, "wb") as g:
        g.write(f.read(100000))
    r = subprocess.run([GTRACE, "open", cut], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    if r.returncode != 1 or "terminal" not in r.stderr or "cut off" in r.stderr:
        fail("not a terminal: loaded the file first: exit %d, stderr %r" % (r.returncode, r.stderr))


def mouse(b, x, y, release=False):
    """an SGR (1006) mouse report at 0-based cell (x, y), as xterm sends it"""
    tmux("send-keys", "-t", "t", "-l", "\033[<%d;%d;%d%s" % (b, x + 1, y + 1, "m" if release else "M"))
    time.sleep(0.05)


def case_mouse():
    start(sim())
    s = wait_for(r"GPU 0")
    npc0 = re.search(r"1 col=(\S+)", s).group(1)
    mouse(64, 60, 10)                       # wheel up: zoom in around x = 60
    s = wait_for(r"1 col=(?!%s\b)" % re.escape(npc0))
    v0 = re.search(r"view \+(\S+)", s).group(1)
    # click a busy cell of the compute stream of GPU 0
    lines = s.splitlines()
    row = next(i for i, l in enumerate(lines) if re.match(r"^ (stream 7|s7)", l))
    col = next(i for i, c in enumerate(lines[row]) if i > 24 and c == "\u2588")
    mouse(0, col, row)
    mouse(0, col, row, release=True)
    s = wait_for(r"start \+\S+\s+dur ")
    if "GPU 0" not in s.splitlines()[-4] and "GPU 0 stream 7" not in s:
        fail("click did not select an event on GPU 0 stream 7", s)
    # drag 20 columns to the left: the view moves later in time
    mouse(0, 80, row)
    mouse(0, 60, row, release=True)
    s = wait_for(r"view \+(?!%s\b)" % re.escape(v0))
    quit_ok()


def case_keystorm():
    """800 keys drawn with a fixed seed over every view, prompts and sizes:
    the viewer must still be running and quit cleanly"""
    import random
    rnd = random.Random(5)
    start(sim("straggler", gpus=4))
    wait_for(r"GPU 0")
    pool = list("123456K\tjkhlHLadwsf0zZ[]cnNmMoO FGrtT<>/g?eee") + [
        "Enter", "Escape", "Up", "Down", "Left", "Right", "PageUp", "PageDown", "Home", "End",
        "BTab", "C-l"]
    sizes = [(120, 40), (80, 24), (33, 9), (200, 50), (12, 4)]
    for i in range(800):
        if i % 160 == 159:
            w, h = sizes[(i // 160) % len(sizes)]
            tmux("resize-window", "-t", "t", "-x", str(w), "-y", str(h))
        k = rnd.choice(pool)
        if k in ("/", "g"):
            keys(k, settle=0)
            type_text(rnd.choice(["gemm", "1.5s", "(", "x", "nccl|elementwise", ""]))
            k = "Enter"
        tmux("send-keys", "-t", "t", k)
        if i % 50 == 0:
            time.sleep(0.05)
    time.sleep(0.5)
    s = screen()
    if "EXIT=" in s:
        fail("gtrace ended during the key storm", s)
    keys("Escape", "Escape", "Escape", "1")
    quit_ok()


def case_live():
    drv = os.path.join(BUILD, "tests", "tui", "live_driver")
    if not os.path.exists(drv):
        fail("no live driver at " + drv)
    cmd = "env LANG=C.UTF-8 TERM=xterm-256color %s 60; echo EXIT=$?; sleep 600" % os.path.abspath(drv)
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", cmd)
    tmux("set-option", "-t", "t", "status", "off", check=False)
    s = wait_for(r"live: recording, step \d+ of 60")
    # the data keeps coming: the step counter and the event count grow
    # (60 steps: a pause read at step 30 of 30 on a loaded machine left no
    # step to come while paused)
    s = wait_for(r"step (1\d|2\d|3\d) of 60", 15)
    if "GPU 0" not in s or "GPU 1" not in s:
        fail("live view lacks the GPUs", s)
    if "follow" not in s:
        fail("live trace view does not follow the newest data", s)
    # pause (p, and space below): the capture keeps arriving, the view stays put
    keys("p")
    s = wait_for(r"live: paused, step (\d+)")
    n = int(re.search(r"live: paused, step (\d+)", s).group(1))
    view = re.search(r"^\S* ?col=.*$", s, re.M)   # the time ruler
    if not view:
        fail("no time ruler on screen", s)
    deadline = time.time() + 10
    while True:
        s = screen()
        m = re.search(r"live: paused, step (\d+)", s)
        if m and int(m.group(1)) > n:
            break
        if time.time() > deadline:
            fail("the capture stopped while the view was paused", s)
        time.sleep(0.2)
    if view.group(0) not in s:
        fail("the paused view moved with the data (was '%s')" % view.group(0), s)
    keys("p")
    wait_for(r"live: recording")
    keys("W")
    wait_for(r"saved live\.gtrace")
    # analysis pages follow the store too
    keys("2")
    wait_for(r"Total Time")
    keys("4")
    wait_for(r"Recommendations")
    keys("1")
    s = wait_for(r"step 60 of 60", 20)
    keys("q")
    s = wait_for(r"^EXIT=\d+", 10)
    if "EXIT=0" not in s:
        fail("live driver did not exit with 0", s)


def detail_span(s):
    """(start, end) in microseconds of the event in the detail pane"""
    m = re.search(r"start \+([0-9.]+)(ms|s)\s+dur \S+\s+end \+([0-9.]+)(ms|s)", s)
    if not m:
        fail("no start/end in the detail pane", s)
    unit = {"ms": 1e3, "s": 1e6}
    return (round(float(m.group(1)) * unit[m.group(2)]), round(float(m.group(3)) * unit[m.group(4)]))


def depth_line(s, n):
    """the screen line of the row labelled 'depth n'"""
    m = re.search(r"^ +depth %d\b.*$" % n, s, re.M)
    if not m:
        fail("no 'depth %d' row" % n, s)
    return m.group(0)


def case_nesting():
    """e expands the python main thread of ResNet-50 (workers 0) into depth rows.
    Truth from python over the raw JSON (X events of tid 25738 sorted by ts, longer
    first; pop while end <= ts; depth = stack height): the deepest nesting is 7 (8
    rows), and the first aten::conv2d is at depth 1 inside ProfilerStep#5.  A depth
    row's event lies inside the event at the same time on the row above (start/end
    read from the detail pane on both rows)."""
    path = resnet()
    start(path, 120, 40)
    wait_for(r"GPU 0", 30)
    keys("/")
    type_text("ProfilerStep")
    keys("Enter")
    wait_for(r"\[step\] ProfilerStep#5")
    keys("e")
    s = wait_for(r"^ +depth 7\b")
    if re.search(r"^ +depth 8\b", s, re.M):
        fail("more depth rows than the trace nests", s)
    for n in range(7):
        depth_line(s, n)
    if "ProfilerStep#5" not in depth_line(s, 0):
        fail("the step's name is not written inside its bar on depth 0", s)
    # the first conv2d: on the depth 1 row, named inside its bar, inside the step
    keys("/")
    type_text("^aten::conv2d$")
    keys("Enter")
    s = wait_for(r"\[cpu_op\] aten::conv2d")
    if "depth 1, inside ProfilerStep#5" not in s:
        fail("aten::conv2d should be at depth 1 inside ProfilerStep#5", s)
    if "aten::conv2d" not in depth_line(s, 1):
        fail("the op's name is not written inside its bar on depth 1", s)
    conv = detail_span(s)
    # one row down: the event there is inside the conv2d (its parent is on the row above)
    keys("j")
    s = wait_for(r"inside aten::conv2d")
    child = detail_span(s)
    if not (conv[0] <= child[0] and child[1] <= conv[1]):
        fail("depth 2 event %r not inside the conv2d %r on the row above" % (child, conv), s)
    if "aten::" not in depth_line(s, 2):
        fail("no aten:: name inside the bars of depth 2", s)
    # one row up from the conv2d: the step holds it
    keys("k", "k")
    s = wait_for(r"\[step\] ProfilerStep#5")
    step = detail_span(s)
    if not (step[0] <= conv[0] and conv[1] <= step[1]):
        fail("conv2d %r not inside the step %r" % (conv, step), s)
    # [ ] walk the events of one depth
    keys("j", "]", "]", "[")
    wait_for(r"depth 1, inside ProfilerStep#5")
    # the next launch after the conv2d (raw JSON, same stack rule: depth 5, in
    # ProfilerStep#5 > conv2d > convolution > _convolution > cudnn_convolution);
    # c to its kernel and back lands on its depth row: one row up is its parent.
    # Search starts at the cursor: Home puts it at the start of the capture
    keys("Home", "/")
    type_text("^cudaLaunchKernel$")
    keys("Enter")
    s = wait_for(r"\[cuda_runtime\] cudaLaunchKernel")
    if "depth 5, inside aten::cudnn_convolution" not in s:
        fail("the launch should be at depth 5 inside aten::cudnn_convolution", s)
    keys("c")
    wait_for(r"\[kernel\] ")
    keys("c")
    wait_for(r"\[cuda_runtime\] cudaLaunchKernel")
    keys("k")
    wait_for(r"\[cpu_op\] aten::cudnn_convolution\s*$")
    # tiny terminal with the lane expanded, then back
    for (w, h) in ((20, 5), (10, 3), (120, 40)):
        tmux("resize-window", "-t", "t", "-x", str(w), "-y", str(h))
        time.sleep(0.2)
        keys("j", "j", "]", "w", "k", "e", "e", "s", settle=0.05)
    s = screen()
    if "EXIT=" in s:
        fail("gtrace ended with an expanded lane in a tiny terminal", s)
    # collapse: the depth rows go away
    keys("/")
    type_text("ProfilerStep")
    keys("Enter")
    wait_for(r"\[step\] ProfilerStep")
    keys("e")
    s = wait_for(r"^ +depth 0\b", absent=True)
    # a click on the thread's label expands it again
    lines = s.splitlines()
    row = next((i for i, l in enumerate(lines) if re.match(r"^ +\S?thread 25738", l)), None)
    if row is None:
        fail("no row for thread 25738", s)
    mouse(0, 3, row)
    mouse(0, 3, row, release=True)
    wait_for(r"^ +depth 7\b")
    quit_ok()
    # ASCII: the expanded rows draw with ASCII glyphs only
    tmux("kill-server", check=False)
    start(path, 100, 30, env="LANG=C LC_ALL=C TERM=vt100")
    wait_for(r"GPU 0", 30)
    keys("/")
    type_text("ProfilerStep")
    keys("Enter", "e")
    s = wait_for(r"^ +depth 7\b")
    if any(ord(c) > 127 for c in s):
        fail("non-ASCII output with LANG=C and an expanded lane", s)
    quit_ok()


def case_expected():
    """gtrace open --param-bytes/--link-gbps: the overview compares the
    collectives with the expected all-reduce time, 97.5 MiB / 25 GB/s =
    102236160 / 25 ns = 4089 us (worked out by hand), and the planted
    comm-bound run takes far longer; without the options nothing is said"""
    path = sim("comm-bound", gpus=2)
    start("--param-bytes 97.5M --link-gbps 25 " + path, w=200, h=50)
    wait_for(r"GPU 0")
    keys("4")
    s = wait_for(r"\[slow-collectives\]")
    if "expected all-reduce time (97.5 MiB at 25 GB/s = 4089 us)" not in s:
        fail("the slow-collectives recommendation lacks the expected time", s)
    m = re.search(r"\[slow-collectives\] collectives take (\d+) us per step on GPU \d "
                  r"\(the least of any GPU\), ([0-9.]+)x", s)
    if not m or abs(int(m.group(1)) / 4089.446 - float(m.group(2))) > 0.06:
        fail("the ratio is not collective time / expected time", s)
    quit_ok()
    tmux("kill-server", check=False)
    start(path)
    wait_for(r"GPU 0")
    keys("4")
    s = wait_for(r"\[comm-bound\]")
    if "slow-collectives" in s:
        fail("an expected-time claim without --param-bytes", s)
    quit_ok()


CJK_NAME = "数据加载器" * 5   # 25 wide characters: 50 cells


def nest_json():
    """a planted Kineto trace: thread 1 nests level_0 > level_1 > ... > level_39
    (level_k starts at 10k us and lasts 100000 - 20k us, so level_k is at depth k
    and its innermost container is level_(k-1)); thread 3 has pA [0, 50000) and
    pB [25000, 75000), which only partly overlap; thread 2 holds one event with a
    long wide (CJK) name, then one named 'after'"""
    ev = []
    for k in range(40):
        ev.append({"ph": "X", "name": "level_%d" % k, "cat": "python_function", "pid": 1,
                   "tid": 1, "ts": 10 * k, "dur": 100000 - 20 * k})
    ev.append({"ph": "X", "name": "pA", "cat": "cpu_op", "pid": 1, "tid": 3, "ts": 0, "dur": 50000})
    ev.append({"ph": "X", "name": "pB", "cat": "cpu_op", "pid": 1, "tid": 3, "ts": 25000, "dur": 50000})
    ev.append({"ph": "X", "name": CJK_NAME, "cat": "cpu_op", "pid": 1, "tid": 2, "ts": 0, "dur": 30000})
    ev.append({"ph": "X", "name": "after", "cat": "cpu_op", "pid": 1, "tid": 2, "ts": 30000, "dur": 30000})
    path = os.path.join(TMP, "nest.json")
    with open(path, "w") as f:
        f.write('{"traceEvents": %s}' % __import__("json").dumps(ev))
    return path


def sgr_cells(line):
    """the cells of one `capture-pane -e` line: (char, bold, reverse) per column
    (a wide character takes two columns)"""
    import unicodedata
    out, bold, rev, i = [], False, False, 0
    while i < len(line):
        m = re.match(r"\x1b\[([0-9;:]*)m", line[i:])
        if m:
            ps = [p for p in re.split(r"[;:]", m.group(1))] or ["0"]
            j = 0
            while j < len(ps):
                p = ps[j] or "0"
                if p in ("38", "48", "58"):
                    j += 3 if j + 1 < len(ps) and ps[j + 1] == "5" else 5
                    continue
                if p == "0":
                    bold = rev = False
                elif p == "1":
                    bold = True
                elif p == "22":
                    bold = False
                elif p == "7":
                    rev = True
                elif p == "27":
                    rev = False
                j += 1
            i += m.end()
            continue
        m = re.match(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b.", line[i:])
        if m:
            i += m.end()
            continue
        ch = line[i]
        out.append((ch, bold, rev))
        if unicodedata.east_asian_width(ch) in ("W", "F"):
            out.append(("", bold, rev))
        i += 1
    return out


def case_nestdeep():
    """depth past the 32 rows and the parent found on the merged last row, a
    range that only partly overlaps, the cursor over a name on a depth row,
    a wide name cut inside its bar, a click below the rows (planted trace,
    truth by construction: see nest_json)"""
    path = nest_json()
    start(path, 120, 60)
    wait_for(r"thread 1\b", 30)
    search_to(r"^level_35$")
    keys("e")
    s = wait_for(r"^ +depth 31\b")
    if not re.search(r"depth 35 \(row 31\), inside level_34\b", s):
        fail("level_35 is at depth 35 (drawn on row 31) inside level_34", s)
    # level_31 is on row 31 at its true depth: its parent is level_30 on row 30
    s = search_to(r"^level_31$")
    if not re.search(r"depth 31, inside level_30\b", s):
        fail("level_31 is at depth 31 inside level_30", s)
    # the cursor on a depth row stays visible where a name is drawn: click
    # on the 3rd letter of the name inside the bar of row 'depth 5'
    s = search_to(r"^level_5$")
    lines = s.splitlines()
    y = next((i for i, l in enumerate(lines) if re.match(r"^ +depth 5\b", l)), None)
    if y is None:
        fail("no row 'depth 5'", s)
    x = lines[y].find(" level_5", 20)
    if x < 0:
        fail("no name inside the bar of depth 5", s)
    x += 3
    mouse(0, x, y)
    mouse(0, x, y, release=True)
    time.sleep(0.3)
    esc = tmux("capture-pane", "-e", "-p", "-t", "t").splitlines()
    cells = sgr_cells(esc[y])
    if x + 1 >= len(cells):
        fail("short escaped line %r" % esc[y])
    cur, beside = cells[x], cells[x + 2]
    if not (cur[1] and cur[2]) or beside[1]:
        fail("no cursor (bold reverse) on the clicked name cell %d of the depth row: %r vs %r"
             % (x, cur, beside), esc[y])
    # a range that only partly overlaps the one open at its start
    search_to(r"^pB$")
    keys("e")
    s = wait_for(r"depth 1, ")
    if not re.search(r"depth 1, overlaps pA\b", s):
        fail("pB only overlaps pA: it is not inside it", s)
    # a wide name cut to its bar: whole characters, an ellipsis, no spill
    s = search_to(r"^after$")
    lines = s.splitlines()
    row = next((l for l in lines if re.match(r"^ +\S?thread 2\b", l)), None)
    if row is None:
        fail("no row for thread 2", s)
    m = re.search(r"((?:数|据|加|载|器)+)(.)", row)
    if not m:
        fail("the wide name is not drawn on thread 2's row", s)
    if m.group(2) != "\u2026":
        fail("a cut wide name must end with an ellipsis, got %r" % m.group(0), s)
    if len(m.group(1)) >= len(CJK_NAME):
        fail("the wide name was not cut", s)
    # its bar is a third of the cells or less (the view spans 3x 'after'):
    # 2 cells per character + space + ellipsis must fit in it
    cells_w = 120 - row.find(m.group(0))   # from the name to the right edge
    if 2 * len(m.group(1)) + 1 > cells_w:
        fail("the wide name spills", s)
    after_ok = re.search(re.escape(m.group(0)) + r".* after\b", row)
    if not after_ok:
        fail("the name of the next bar ('after') is overwritten by the wide name", s)
    # a click below the last row does nothing (the cursor's thread stays collapsed)
    search_to(r"^pA$")
    keys("e")                       # collapses thread 3
    search_to(r"^level_0$")
    keys("e")                       # collapses thread 1; the cursor stays on it
    s = wait_for(r"^ +depth 0\b", absent=True)
    lines = s.splitlines()
    last = max(i for i, l in enumerate(lines) if re.match(r"^ +\S?(thread|depth) ", l))
    mouse(0, 3, last + 3)
    mouse(0, 3, last + 3, release=True)
    time.sleep(0.5)
    s = screen()
    if re.search(r"^ +depth 0\b", s, re.M):
        fail("a click below the rows expanded the cursor's thread", s)
    quit_ok()


def case_livenest():
    """a live capture with a host thread expanded: the depth rows follow the
    growing thread until the capture ends, and the view keeps up"""
    drv = os.path.join(BUILD, "tests", "tui", "live_driver")
    if not os.path.exists(drv):
        fail("no live driver at " + drv)
    cmd = "env LANG=C.UTF-8 TERM=xterm-256color %s 30; echo EXIT=$?; sleep 600" % os.path.abspath(drv)
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", cmd)
    tmux("set-option", "-t", "t", "status", "off", check=False)
    # a step done: the first frame comes before the first poll (empty store),
    # and the search runs once, on Enter
    wait_for(r"live: recording, step [1-9]\d* of 30", 15)
    keys("/")
    type_text("cudaLaunchKernel")
    keys("Enter")
    wait_for(r"\[cuda_runtime\] cudaLaunchKernel")
    keys("e")
    s = wait_for(r"^ +depth 0\b")
    keys("F")
    s = wait_for(r"step 30 of 30", 30)
    if not re.search(r"^ +depth 0\b", s, re.M):
        fail("the depth rows went away while the capture grew", s)
    m = re.search(r"dropped (\d+)", s)
    if m and m.group(1) != "0":
        fail("the live view fell behind with a thread expanded (events dropped)", s)
    # the newest events are on the depth rows too: a depth row under the
    # cursor's thread shows events at the end of the view
    keys("j")
    keys("[")
    s = wait_for(r"depth \d+", 5)
    keys("q")
    s = wait_for(r"^EXIT=\d+", 10)
    if "EXIT=0" not in s:
        fail("live driver did not exit with 0", s)



def case_rankinput():
    """4 ranks with the DataLoader planted slow in rank 2 only: the overview has
    a line per rank (rank 2 HIGHLY, the others NOT), and Enter on the
    input-bound recommendation opens the pipeline page on rank 2"""
    path = os.path.join(TMP, "rank2.gtrace")
    r = subprocess.run([GTRACE, "sim", "--force", "-o", path, "--ranks", "4", "--gpus", "2", "--steps", "10",
                        "--scenario", "input-bound", "--scenario-rank", "2"],
                       capture_output=True, text=True)
    if r.returncode:
        fail("gtrace sim --scenario-rank: " + r.stderr.strip())
    start(path)
    wait_for(r"GPU 0")
    keys("4")
    s = wait_for(r"\[input-bound\] rank 2: ")
    for k in range(4):
        want = r"^\s+rank %d\s+%s input-bound" % (k, "HIGHLY" if k == 2 else "NOT")
        if not re.search(want, s, re.M):
            fail("no line /%s/ on the overview" % want, s)
    recs = re.findall(r"^\s+(?:!!|! |- ) \[([a-z-]+)\]", s, re.M)
    for _ in range(recs.index("input-bound")):
        keys("j")
    keys("Enter")
    s = wait_for(r"Verdict: ")
    if not re.search(r"^ rank 2 \(R: next rank\), 10 steps", s, re.M):
        fail("the pipeline page is not on rank 2", s)
    if "HIGHLY input-bound" not in s:
        fail("rank 2's verdict is not shown", s)
    keys("R")
    s = wait_for(r"^ rank 3 \(R: next rank\)")
    if "NOT input-bound" not in s:
        fail("rank 3 is not NOT input-bound", s)
    quit_ok()


def case_bgopen():
    """issue 16: a big .gtrace (format 1.1, with its per-lane summary) shows
    its first frame while the events still load (status 'loading N%', lanes
    drawn from the summary), and once loaded every page equals a whole open
    (GTRACE_OPEN_WHOLE=1): the zoomed-out trace (from the summary in both),
    zoomed in (from the events), the kernel table"""
    path = os.path.join(TMP, "bg.gtrace")
    r = subprocess.run([GTRACE, "sim", "-o", path, "--events", "1M", "--ranks", "2", "--gpus", "2"],
                       capture_output=True, text=True)
    if r.returncode:
        fail("gtrace sim failed: " + r.stderr.strip())
    shots = []
    for whole in (0, 1):
        env = "LANG=C.UTF-8 TERM=xterm-256color GTRACE_OPEN_BG_MIN_MB=0 GTRACE_OPEN_WHOLE=%d " \
              "GTRACE_LOAD_DELAY_MS=%d" % (
            whole, 0 if whole else 4000)
        start(path, env=env)
        if not whole:
            # the first frame, while loading: lanes with their blocks
            s = wait_for(r"loading \d+%", 3)
            if not re.search(r"stream 7 \(compute\)\s+[\u2581-\u2588]{20}", s):
                fail("no lane drawn from the summary while loading", s)
            s = wait_for(r"loading \d+%", 30, absent=True)
        else:
            s = wait_for(r"stream 7 \(compute\)\s+[\u2581-\u2588]", 30)
        # the steps are found after the load, off the drawing thread: the
        # pages compare once they are (under ASan at load the background
        # open's page 0 was taken while 'finding the steps...')
        s = wait_for(r"finding the steps", 30, absent=True)
        pages = [s]
        keys("j", "j")
        for _ in range(8):
            keys("w", settle=0.05)
        pages.append(wait_for(r"view \+", 5))
        keys("2")
        pages.append(wait_for(r"\d+ of \d+ rows", 10))
        quit_ok()
        tmux("kill-server", check=False)
        shots.append(pages)
    for i, (a, b) in enumerate(zip(shots[0], shots[1])):
        if a != b:
            fail("page %d after the background load differs from a whole open:\n%s" % (i, a), b)
    # quitting while the events load: at once, exit status 0
    start(path, env="LANG=C.UTF-8 TERM=xterm-256color GTRACE_OPEN_BG_MIN_MB=0 "
                    "GTRACE_LOAD_DELAY_MS=20000")
    wait_for(r"loading \d+%", 3)
    quit_ok()


def case_cutload():
    """a capture cut off mid-write opens with a warning on a line of its own,
    after the loading line is cleared (not glued to its percentage)"""
    path = os.path.join(TMP, "cut.gtrace")
    r = subprocess.run([GTRACE, "sim", "--force", "-o", path, "--events", "1M"], capture_output=True, text=True)
    if r.returncode:
        fail("gtrace sim: " + r.stderr.strip())
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.truncate(size * 2 // 3)
    s, out = open_logged(path, 160)
    m = re.search(r"(.{0,12})gtrace: warning: \S*cut\.gtrace: cut off after \d+ events", out)
    if not m:
        fail("no cut-off warning before the viewer: %r" % out[:400], s)
    if not re.search(r"(\r\x1b\[K|\n|^)$", m.group(1)):
        fail("the warning is glued to the loading line: %r" % m.group(0), s)
    # the viewer says it too: the warning went behind the screen (the
    # status line may first show "finding the steps...": under the
    # sanitizers the step search takes seconds)
    s = wait_for(r"cut\.gtrace, cut off \|", 30)
    if not re.search(r"cut\.gtrace, cut off \|", status_line(s)):
        fail("the status line does not say the file is cut off", s)
    quit_ok()


def case_manygpus():
    """40 ranks of one GPU at 120x40: the GPU rows give way ("... N more GPUs")
    so that every recommendation is on screen, and j/Enter reach the last one"""
    path = os.path.join(TMP, "r40.gtrace")
    r = subprocess.run([GTRACE, "sim", "--force", "-o", path, "--ranks", "40", "--gpus", "1", "--steps", "5",
                        "--scenario", "input-bound", "--scenario-rank", "7"],
                       capture_output=True, text=True)
    if r.returncode:
        fail("gtrace sim: " + r.stderr.strip())
    start("--param-bytes 1G --link-gbps 25 " + path)
    wait_for(r"GPU 0")
    keys("4")
    s = wait_for(r"Recommendations")
    if not re.search(r"^\s+\.\.\. \d+ more GPUs", s, re.M):
        fail("the GPU rows do not give way", s)
    recs = re.findall(r"^\s+(?:!!|! |- ) \[([a-z-]+)\]", s, re.M)
    for want in ("input-bound", "comm-bound", "slow-collectives"):
        if want not in recs:
            fail("recommendation %s not on screen" % want, s)
    for _ in range(len(recs) - 1):
        keys("j")
    keys("Enter")
    wait_for(r"evidence: ")
    quit_ok()


def case_markedge():
    """a mark dragged past the end (or the start) of the capture ends at its
    edge: the range shown never runs past the capture length in the status"""
    start(sim())
    s = wait_for(r"GPU 0")
    span = re.search(r"\| ([0-9.]+m?s) \| dropped", s).group(1)
    keys("f", "End", "m", "L", "L", "L", "m")
    s = wait_for(r"^ range \+\S+ \.\. \+(\S+) \(")
    end = re.search(r"^ range \+\S+ \.\. \+(\S+) \(", s, re.M).group(1)
    if end != span:
        fail("the mark ends at +%s, the capture at %s" % (end, span), s)
    keys("Escape", "Home", "m", "H", "H", "H", "m")
    s = wait_for(r"^ range \+0ns \.\. ")
    if re.search(r"^ range -", s, re.M):
        fail("the mark starts before the capture", s)
    quit_ok()


def case_recwrap():
    """at 80x24 the selected recommendation is shown whole (wrapped), down to
    its advice; the others stay one line each"""
    start(resnet(), 80, 24)
    wait_for(r"GPU 0")
    keys("4")
    s = wait_for(r"\[input-bound\]")
    flat = " ".join(l.strip() for l in s.splitlines())
    if "raise DataLoader workers or prefetch" not in flat:
        fail("the selected recommendation is cut before its advice", s)
    quit_ok()


def start_live(steps, scenario="balanced", w=120, h=40):
    """run the live driver (a simulated capture, one step per 100 ms poll)"""
    drv = os.path.join(BUILD, "tests", "tui", "live_driver")
    if not os.path.exists(drv):
        fail("no live driver at " + drv)
    cmd = "env LANG=C.UTF-8 TERM=xterm-256color %s %d %s; echo EXIT=$?; sleep 600" % (
        os.path.abspath(drv), steps, scenario)
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", str(w), "-y", str(h), cmd)
    tmux("set-option", "-t", "t", "status", "off", check=False)


def live_step(s):
    m = re.search(r"live: \w+, step (\d+) of", s)
    return int(m.group(1)) if m else -1


def wait_steps(n, timeout=40):
    """wait until the live capture has produced n more steps; return the screen
    (a message takes precedence over the status fields and can hide the
    state's step part: the message is cleared until the step shows)"""
    s = screen()
    first = live_step(s)
    for _ in range(20):
        if first >= 0:
            break
        clear_msg()
        time.sleep(0.1)
        first = live_step(screen())
    end = time.time() + timeout
    while time.time() < end:
        s = screen()
        k = live_step(s)
        if first >= 0 and k >= first + n:
            return s
        if k < 0:
            clear_msg()
        time.sleep(0.1)
    fail("the live capture did not grow by %d steps" % n, s)


def case_livepause():
    """Space always pauses (also on a group row, where it used to fold the
    group), the status says paused (never follow) while paused"""
    start_live(400)
    s = wait_for(r"live: recording, step \d+ of 400")
    wait_for(r"view \+\S+ \(\S+\) follow")
    # the cursor starts on the first row, a group header
    keys("Space")
    wait_for(r"view paused, capture continues")
    clear_msg()
    s = wait_for(r"live: paused.*view \+")
    if re.search(r"\) follow", s):
        fail("the status says follow while paused", s)
    if not re.search(r"view \+\S+ \(\S+\) paused", s):
        fail("the status does not say paused", s)
    if "GPU 1" not in s:
        fail("Space folded the group instead of pausing", s)
    keys("Space")
    wait_for(r"live: recording")
    wait_for(r"\) follow")
    # paused on another page, the status says paused too (not the trace
    # view's last "follow")
    keys("2")
    wait_for(r"Total Time")
    keys("Space")
    wait_for(r"view paused, capture continues")
    clear_msg()
    s = wait_for(r"live: paused.*view \+")
    if re.search(r"\) follow", s) or not re.search(r"\) paused", s):
        fail("the kernel page's status does not say paused", s)
    keys("Space", "1")
    wait_for(r"live: recording")
    # Enter still folds a group row
    keys("Enter")
    s = wait_for(r"live: recording")
    keys("q")
    s = wait_for(r"^EXIT=\d+", 10)
    if "EXIT=0" not in s:
        fail("live driver did not exit with 0", s)


def inst_count(s):
    m = re.search(r"^ (\d+) instances  total", s, re.M)
    return int(m.group(1)) if m else -1


def case_livedrill():
    """kernel instances opened in a live view stay open across refreshes and
    grow in place; paused, the page holds still while the capture grows"""
    start_live(400)
    wait_for(r"live: recording, step \d+ of 400")
    keys("2")
    wait_for(r"Total Time")
    # a loaded machine can lose a key sent while the page computes: Enter
    # again if the list did not open (whether it stays open is checked below)
    for attempt in range(3):
        keys("Enter")
        end = time.time() + 4
        while time.time() < end and not re.search(r"^ instances of ", screen(), re.M):
            time.sleep(0.1)
        if re.search(r"^ instances of ", screen(), re.M):
            break
    s = wait_for(r"^ instances of ")
    title = re.search(r"^ instances of (.*)$", s, re.M).group(1).strip()
    n0 = inst_count(s)
    # two recomputations (every 2 s) while data keeps coming
    s = wait_steps(20)
    time.sleep(2.5)
    s = screen()
    if not re.search(r"^ instances of ", s, re.M):
        fail("the instance list closed on a live update", s)
    if title not in s:
        fail("the instance list changed kernel (was %s)" % title, s)
    n1 = inst_count(s)
    if n1 <= n0:
        fail("the open instance list did not update (%d, then %d instances)" % (n0, n1), s)
    # paused: the page holds still while the capture keeps arriving
    keys("p")
    s = wait_for(r"live: paused")
    time.sleep(2.5)   # a recompute due before the pause has run by now
    n2 = inst_count(screen())
    wait_steps(30)
    time.sleep(2.5)
    s = screen()
    if inst_count(s) != n2:
        fail("the paused page changed (%d, then %d instances)" % (n2, inst_count(s)), s)
    # the overview, opened while paused, holds still too (its event count)
    keys("4")
    s = wait_for(r"(\d+) events over")
    ev0 = re.search(r"(\d+) events over", s).group(1)
    wait_steps(20)
    time.sleep(2.5)
    s = screen()
    m = re.search(r"(\d+) events over", s)
    if not m or m.group(1) != ev0:
        fail("the paused overview changed (%s events, then %s)" % (ev0, m and m.group(1)), s)
    keys("2")
    wait_for(r"^ instances of ")
    # Esc goes back to the table, which still selects that kernel
    keys("p", "Escape")
    s = wait_for(r"Total Time")
    keys("q")
    s = wait_for(r"^EXIT=\d+", 10)
    if "EXIT=0" not in s:
        fail("live driver did not exit with 0", s)


def case_livejump():
    """Enter on an overview recommendation in a live view stops following:
    the trace view stays on the evidence while the capture grows"""
    start_live(400, "straggler")
    wait_for(r"live: recording, step \d+ of 400")
    wait_steps(12)
    keys("4")
    s = wait_for(r"\[straggler\]", 15)
    recs = re.findall(r"^\s+(?:!!|! |- ) \[([a-z-]+)\]", s, re.M)
    for _ in range(recs.index("straggler")):
        keys("j")
    keys("Enter")
    wait_for(r"evidence: straggler")
    clear_msg()
    s = wait_for(r"view \+\S+ \(")
    if re.search(r"\) follow", s):
        fail("the trace view follows the live edge after a jump", s)
    view = re.search(r"view (\+\S+ \(\S+\))", s).group(1)
    wait_steps(20)
    s = screen()
    if view not in s:
        fail("the view moved away from the evidence (was %s)" % view, s)
    keys("q")
    s = wait_for(r"^EXIT=\d+", 10)
    if "EXIT=0" not in s:
        fail("live driver did not exit with 0", s)


GEMM = "sm90_xmma_gemm_f16f16_f16f32_f32_nt_n_tilesize%sx128x64"


def names_json():
    """a planted Kineto trace: three GEMM kernels whose names differ only at
    the end (tilesize64/128/256, 5, 6 and 7 launches), and clustered_kernel,
    24 launches of 1846, 1847, ..., 1869 us (all print as 1.85ms-1.87ms)"""
    ev, ts = [], 0
    for i, t in enumerate(["64", "128", "256"]):
        for j in range(5 + i):
            ev.append({"ph": "X", "cat": "kernel", "name": GEMM % t, "pid": 0, "tid": 7, "ts": ts,
                       "dur": 100 + 10 * i + j, "args": {"device": 0, "stream": 7}})
            ts += 200
    for j in range(24):
        ev.append({"ph": "X", "cat": "kernel", "name": "clustered_kernel", "pid": 0, "tid": 7,
                   "ts": ts, "dur": 1846 + j, "args": {"device": 0, "stream": 7}})
        ts += 2000
    path = os.path.join(TMP, "names.json")
    with open(path, "w") as f:
        f.write('{"traceEvents": %s}' % __import__("json").dumps(ev))
    return path


def name_cells(s):
    """the Name column's cells of the kernel table on screen"""
    lines = s.splitlines()
    hdr = next((i for i, l in enumerate(lines) if "Total Time" in l and "Name" in l), None)
    if hdr is None:
        fail("no table header", s)
    x = lines[hdr].index("Name")
    out = []
    for l in lines[hdr + 1:]:
        if not re.match(r"\s+[0-9.]+\s", l):
            break
        out.append(l[x:].strip())
    return out


def case_names():
    """kernel names that differ only at the end stay apart at 80x24 (cut in the
    middle), the footer holds the whole name, w widens the column, the sort
    marker is set apart, histogram bins never read x..x, a long name wraps in
    the trace view's detail pane, and a status message is shown whole"""
    start(names_json(), 80, 24)
    wait_for(r"GPU 0")
    keys("2")
    s = wait_for(r"Total Time")
    if "Total Time \u25bc" not in s:
        fail("the sort marker is not set apart from the heading", s)
    cells = name_cells(s)
    gemm = [c for c in cells if c.startswith("sm90")]
    if len(gemm) != 3 or len(set(gemm)) != 3:
        fail("the three GEMM rows do not read apart: %r" % gemm, s)
    for t in ("64", "128", "256"):
        if not any(c.endswith("size%sx128x64" % t) for c in gemm):
            fail("no row keeps the end size%sx128x64" % t, s)
    # the footer: the whole name of the selected row (the longest-running GEMM)
    keys("j")
    s = wait_for(r"^ name: sm90")
    if not re.search(r"^ name: %s\s*$" % (GEMM % "256"), s, re.M):
        fail("the footer lacks the whole name", s)
    w0 = len(name_cells(s)[1])
    keys("w")
    s = wait_for(r"name column: half the width \(w: wider\)")
    if len(name_cells(s)[1]) <= w0:
        fail("w did not widen the name column", s)
    # histogram: 24 instances, no bin with equal bounds
    keys("k", "Enter")
    s = wait_for(r"^ 24 instances")
    bins = re.findall(r"^\s+(\S+?)\.\.(\S+)\s+(\d+)\s", s, re.M)
    if not bins:
        fail("no histogram", s)
    for lo, hi, n in bins:
        if lo == hi:
            fail("a histogram bin reads %s..%s" % (lo, hi), s)
    if sum(int(n) for lo, hi, n in bins) != 24:
        fail("the histogram does not count the 24 instances", s)
    # the detail pane of a narrow trace view: the whole name, wrapped
    keys("Escape", "1")
    tmux("resize-window", "-t", "t", "-x", "50", "-y", "30", check=False)
    keys("/")
    type_text("tilesize256")
    keys("Enter")
    s = wait_for(r"\[kernel\] sm90")
    flat = "".join(l.strip() for l in s.splitlines())
    if GEMM % "256" not in flat:
        fail("the detail pane cuts the kernel's name", s)
    # e on a GPU stream (not a host thread): it says so, no depth rows
    keys("e")
    s = wait_for(r"e: not a host thread")
    if re.search(r"^ +depth 0\b", s, re.M):
        fail("e expanded a GPU stream whose kernels do not nest", s)
    # the overview's top kernels at 80x24: the GEMM names cut in the middle
    tmux("resize-window", "-t", "t", "-x", "80", "-y", "24", check=False)
    keys("4")
    s = wait_for(r"Top kernels")
    tops = re.findall(r"^\s+[0-9.]+%\s+\S+\s+\d+ x  (sm90\S*)\s*$", s, re.M)
    if len(tops) != 3 or len(set(tops)) != 3:
        fail("the overview's top GEMM kernels do not read apart: %r" % tops, s)
    quit_ok()


def status_line(s):
    return s.rstrip("\n").splitlines()[-1]


def case_navigate():
    """the planted names trace (GEMM launches at 0, 200, ..., 3400 us, 18 of
    them, then clustered_kernel; 51.5 ms in all): the cursor's time is read
    out, g TIME puts the cursor on TIME without a view before the start,
    search counts its hits, starts at the cursor, says case is ignored and
    when nothing matches; a resize keeps the visible span"""
    start(names_json(), 80, 24)
    wait_for(r"GPU 0")
    s = wait_for(r"view \+0ns \(51\.5ms\) \| cursor \+0\.000ms")
    keys("g")
    type_text("0")
    keys("Enter")
    s = wait_for(r"cursor \+0\.000ms")
    if not re.search(r"view \+0ns \(", status_line(s)):
        fail("g 0: the view does not start at the capture start", s)
    # a number without a unit is refused, as stats --range does (it meant ns)
    keys("g")
    type_text("1.5")
    keys("Enter")
    s = wait_for(r"not a time: '1\.5' \(units ns, us, ms, s")
    clear_msg()
    s = wait_for(r"cursor \+")
    if not re.search(r"cursor \+0\.000ms", s):
        fail("g 1.5 moved the cursor", s)
    keys("g")
    type_text("2.6ms")
    keys("Enter")
    s = wait_for(r"cursor \+2\.600ms")
    # search from the cursor: the 14th launch (k = 13) starts at 2600 us
    keys("/")
    type_text("TILESIZE")
    keys("Enter")
    s = wait_for(r"/TILESIZE: match \d+ of \d+ \(case-insensitive\)")
    if "match 14 of 18 (case-insensitive)" not in s:
        fail("search did not start at the cursor or miscounts (want match 14 of 18)", s)
    if "start +2.600ms" not in s:
        fail("the match is not the launch at 2.6 ms", s)
    keys("n")
    s = wait_for(r"match 15 of 18")
    keys("N", "N")
    s = wait_for(r"match 13 of 18")
    keys("/")
    type_text("no_such_kernel")
    keys("Enter")
    wait_for(r"/no_such_kernel: no event matches \(case-insensitive\)")
    # resize: the visible span stays
    keys("f")
    s = wait_for(r"view \+0ns \(51\.5ms\)")
    tmux("resize-window", "-t", "t", "-x", "200", "-y", "60", check=False)
    time.sleep(0.5)
    s = wait_for(r"view \+\S+ \(")
    span = re.search(r"view \+\S+ \((\S+)\)", status_line(s)).group(1)
    if span != "51.5ms":
        fail("80x24 -> 200x60 changed the visible span from 51.5ms to %s" % span, s)
    quit_ok()


def case_ovsmall():
    """4 ranks x 2 GPUs (input-bound planted in rank 2) at 80x24: the overview
    shows a GPU row beside "... more GPUs" and PgDn reaches all 8 GPU rows;
    j reaches every recommendation `gtrace stats` lists; the breakdown's
    shares are all on screen (they add up to 100 %), the per-rank line never
    ends in half a figure"""
    path = os.path.join(TMP, "r4.gtrace")
    r = subprocess.run([GTRACE, "sim", "--force", "-o", path, "--ranks", "4", "--gpus", "2", "--steps", "10",
                        "--scenario", "input-bound", "--scenario-rank", "2"],
                       capture_output=True, text=True)
    if r.returncode:
        fail("gtrace sim: " + r.stderr.strip())
    opts = ["--param-bytes", "1G", "--link-gbps", "25"]
    st = subprocess.run([GTRACE, "stats", path, "--report", "overview"] + opts,
                        capture_output=True, text=True).stdout
    want = set(re.findall(r"^(?:high|warn|info)\s+([a-z]+(?:-[a-z]+)*)\s", st, re.M))
    want |= {"input-bound", "slow-collectives"}   # planted / asked for
    start(" ".join(opts) + " " + path, 80, 24)
    wait_for(r"GPU 0")
    keys("4")
    s = wait_for(r"Recommendations")
    if re.search(r"^\s+\.\.\. \d+ more GPUs", s, re.M) and not re.search(r"^\s+r\d+ GPU \d+ ", s, re.M):
        fail("'more GPUs' with no GPU row shown", s)
    # the "more GPUs" line is whole (it was cut at "--report ove") and says
    # "row 1 of 8", never "1-1 of 8"
    more = re.search(r"^\s+(\.\.\. \d+ more GPUs.*?)\s*$", s, re.M)
    if more and (not more.group(1).endswith(")") or re.search(r"\b(\d+)-\1 of", more.group(1))):
        fail("the 'more GPUs' line is cut or reads oddly: %r" % more.group(1), s)
    seen = set(re.findall(r"^\s+r(\d+) GPU (\d+) ", s, re.M))
    for _ in range(10):
        keys("NPage")
        seen |= set(re.findall(r"^\s+r(\d+) GPU (\d+) ", screen(), re.M))
    if len(seen) != 8:
        fail("PgDn reached %d of the 8 GPU rows: %s" % (len(seen), sorted(seen)), screen())
    # the breakdown shares, largest first, add up to 100 %
    flat = " ".join(l.strip() for l in s.splitlines())
    m = re.search(r"\(kernel time / step\):\s+((?:[A-Z][A-Za-z ]+ \d+%\s*)+)", flat)
    if not m:
        fail("no breakdown shares", s)
    total = sum(int(x) for x in re.findall(r"(\d+)%", m.group(1)))
    if abs(total - 100) > 5:
        fail("the breakdown shares on screen add up to %d %%: %s" % (total, m.group(1)), s)
    # the breakdown's communication is the exposed part; the health line's is the total
    if "Exposed communication" not in m.group(1):
        fail("the breakdown's communication share does not say it is the exposed part", s)
    if "collectives (total kernel time" not in flat:
        fail("the health line's collective share does not say it is the total", s)
    line = next((l for l in s.splitlines() if "per rank, worst first:" in l), "")
    if not re.search(r"per rank, worst first:(  r\d+ [A-Z]+ [0-9.]+%)*(  \.\.\.)?\s*$", line):
        fail("the per-rank line cuts a figure: %r" % line, s)
    # every recommendation by j
    kinds = set()
    for _ in range(12):
        kinds |= set(re.findall(r"\[([a-z]+(?:-[a-z]+)*)\]", screen()))
        keys("j")
    if not want <= kinds:
        fail("recommendations not reachable: %s" % sorted(want - kinds), screen())
    quit_ok()


def area_json():
    """a planted Kineto trace: GPU 0 streams 7, 8, 9 each run one kernel per
    millisecond k = 0..49, starting at k ms: kA 300 us on 7, kB 200 us on 8,
    kC 100 us on 9"""
    ev = []
    for k in range(50):
        for tid, name, dur in ((7, "kA", 300), (8, "kB", 200), (9, "kC", 100)):
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": tid,
                       "ts": 1000 * k, "dur": dur, "args": {"device": 0, "stream": tid}})
    path = os.path.join(TMP, "area.json")
    with open(path, "w") as f:
        f.write('{"traceEvents": %s}' % __import__("json").dumps(ev))
    return path


def case_area():
    """m on stream 7 at 0 ms, m again on stream 8 at 10 ms: an area over those
    two lanes.  The range ends a column after 10 ms (in the gap after the
    10 ms launches), so it holds the launches at 0..10 ms: 11 kA (3.30 ms) and
    11 kB (2.20 ms), 22 events, none of stream 9's kC"""
    start(area_json())
    wait_for(r"GPU 0")
    wait_for(r"^ stream 7 .*\n stream 8 .*\n stream 9 ")
    keys("j")   # the first row is the GPU 0 group, the next stream 7
    keys("g")
    type_text("0")
    keys("Enter")
    keys("m")
    keys("j")
    keys("g")
    type_text("10ms")
    keys("Enter")
    keys("m")
    s = wait_for(r"^ area \+0ns \.\. \+(\S+) \(")
    end = re.search(r"^ area \+0ns \.\. \+(\S+) \(", s, re.M).group(1)
    unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
    m = re.match(r"([0-9.]+)(ns|us|ms|s)$", end)
    end_ms = float(m.group(1)) * unit[m.group(2)]
    if not 10.3 <= end_ms < 11.0:
        fail("the area should end in the gap after 10 ms, ends at %s" % end, s)
    if not re.search(r"2 lanes: 22 events, busy 5\.50ms", s):
        fail("the area's aggregate is not 2 lanes, 22 events, busy 5.50ms", s)
    if not re.search(r"^\s+3\.30ms\s+11 x\s+300us\s+kA\s*$", s, re.M):
        fail("kA: want 3.30ms over 11 launches", s)
    if not re.search(r"^\s+2\.20ms\s+11 x\s+200us\s+kB\s*$", s, re.M):
        fail("kB: want 2.20ms over 11 launches", s)
    if re.search(r"\bkC\s*$", s.split(" area ")[1], re.M):
        fail("stream 9's kC is counted in an area over streams 7 and 8", s)
    # Esc clears the area; a mark on one row is a time range over every lane
    keys("Escape")
    wait_for(r"^ area ", absent=True)
    keys("m", "L", "m")
    wait_for(r"^ range \+")
    quit_ok()


def run_json(name, off_us, step_us=None):
    """one planted run: ten 300 us kernels every 1 ms from off_us (9.3 ms), and
    when step_us is given a ProfilerStep#0 on a host thread from there"""
    ev = [{"ph": "X", "cat": "kernel", "name": "kA", "pid": 0, "tid": 7, "ts": off_us + 1000 * k,
           "dur": 300, "args": {"device": 0, "stream": 7}} for k in range(10)]
    if step_us is not None:
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 1,
                   "tid": 1, "ts": step_us, "dur": 5000})
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write('{"traceEvents": %s}' % __import__("json").dumps(ev))
    return path


def case_runalign():
    """two runs a day apart opened together start together: aligned at their
    first event the capture spans 9.3 ms (not a day); with steps in both,
    at their first step: B's step starts 2 ms after its first kernel, A's
    with its first kernel, so B's kernels begin 2 ms before A's: 11.3 ms"""
    day = 86400 * 1000000
    a, b = run_json("a.json", 0), run_json("b.json", day)
    start("%s %s" % (a, b))
    s = wait_for(r"GPU 0")
    s = wait_for(r"runs aligned at their first event")
    if not re.search(r"\| 9\.30ms \|", status_line(s)):
        fail("the aligned runs do not span 9.3 ms", s)
    quit_ok()
    tmux("kill-server", check=False)
    a, b = run_json("sa.json", 0, 0), run_json("sb.json", day, day + 2000)
    start("%s %s" % (a, b))
    s = wait_for(r"runs aligned at their first step")
    if not re.search(r"\| 11\.3ms \|", status_line(s)):
        fail("runs aligned at their steps should span 11.3 ms", s)
    quit_ok()


def case_xplane():
    """a TensorFlow XPlane profile: GPU 4's compute stream and its TensorFlow Ops
    and Name Scope lanes in the trace view; the 11 kernel names of the file
    (tests/import/xplane_facts.py) in the kernel table"""
    path = os.path.join(TESTDATA, "tf", "tf_bert_multiworker.xplane.pb")
    need_testdata(path)
    start(path, 120, 60)
    s = wait_for(r"GPU 4", 30)
    for lane in ("TensorFlow Ops", "TensorFlow Name Scope", r"Stream #134\(Compute\)"):
        if not re.search(lane, s):
            fail("no lane %s on the XPlane profile" % lane, s)
    keys("2")
    s = wait_for(r"Total Time")
    if not re.search(r"\b11 of 11 rows", s):
        fail("kernel table does not hold the 11 kernel names of the profile", s)
    quit_ok()


@group("capture")
def case_attach():
    """gtrace attach on a program started without gtrace: the capture
    library is loaded with ptrace, the live view fills, q detaches; the
    program runs on and ends with exactly its own output and status"""
    prog = os.path.join(BUILD, "tests", "capture", "attach", "att_sleeper")
    if not os.path.exists(prog):
        skip("no attach target at " + prog)
    out = os.path.join(TMP, "att.out")
    env = dict(os.environ, GTRACE_SYNTH="20000")
    env.pop("GTRACE_AUTOSTART", None)
    with open(out, "w") as f:
        p = subprocess.Popen([prog, "200", "50000", "7"], stdout=f, env=env)
    try:
        deadline = time.time() + 10
        while "tick 1\n" not in open(out).read():
            if time.time() > deadline:
                fail("the target did not start")
            time.sleep(0.05)
        cmd = "env LANG=C.UTF-8 TERM=xterm-256color %s attach %d; echo EXIT=$?; sleep 600" % (
            os.path.abspath(GTRACE), p.pid)
        tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", cmd)
        tmux("set-option", "-t", "t", "status", "off", check=False)
        s = wait_for(r"live: 1 procs? capturing", 15)
        if "pid %d" % p.pid not in s:
            fail("the live view does not name the process", s)
        s = wait_for(r"synth_kernel_\d|GPU 0", 10)
        keys("q")
        s = wait_for(r"^EXIT=\d+", 10)
        if "EXIT=0" not in s:
            fail("gtrace attach did not exit with 0", s)
        lst = subprocess.run([GTRACE, "attach", "--list"], capture_output=True, text=True).stdout
        if not re.search(r"^%d\s+\S+\s+dormant\b" % p.pid, lst, re.M):
            fail("after q the process is not listed dormant:\n" + lst)
        rc = p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    if rc != 7:
        fail("the target exited with %d, not its own 7" % rc)
    want = "".join("tick %d\n" % i for i in range(200))
    if open(out).read() != want:
        fail("the target's output changed")


@group("cudaemu")
def case_emulive():
    """gtrace run on the CUDA/CUPTI emulator's stand-in trainer (tests/cudaemu):
    the live view fills with both GPUs, ends with the target, nothing lost,
    and the capture saved with W holds every launch and every piece of GPU
    work of the trainer's ground truth"""
    emu = os.path.abspath(os.path.join(BUILD, "tests", "cudaemu"))
    trainer = os.path.join(emu, "cudaemu_trainer")
    if not os.path.exists(trainer):
        fail("no emulator trainer at " + trainer)
    d = tempfile.mkdtemp(prefix="gtrace-emulive-")
    cmd = ("cd %s && env LANG=C.UTF-8 TERM=xterm-256color LD_LIBRARY_PATH=%s %s run -- %s "
           "--out truth.tsv --threads 2 --work 30000 --rate 15000; echo EXIT=$?; sleep 600"
           % (d, emu, os.path.abspath(GTRACE), trainer))
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", cmd)
    tmux("set-option", "-t", "t", "status", "off", check=False)
    s = wait_for(r"live: 1 proc capturing", 20)
    # both GPUs, in either order of arrival: each trainer thread drives one
    # GPU, and on a loaded machine GPU 1's first activity can land before GPU 0's
    # (CI, ASan: the first frame with GPU 1 had no GPU 0 yet)
    s = wait_for(r"(?s)GPU 0 .*GPU 1 ", 15)
    s = wait_for(r"live: 1 proc target exited", 40)
    if not re.search(r"events, 0 lost", s):
        fail("the live capture lost events", s)
    keys("W")                               # asks for a name, offers gtrace-TIME.gtrace
    wait_for(r"keep the capture as: gtrace-", 10)
    keys("Enter")
    # the full path (trial 2: "saved gtrace-N.gtrace" left the directory to guess);
    # the name may be cut at 120 columns
    wait_for(r"saved " + re.escape(os.path.realpath(d)) + r"/gtrace-", 10)
    files = [f for f in os.listdir(d) if f.startswith("gtrace-") and f.endswith(".gtrace")]
    if len(files) != 1:
        fail("W saved %s in %s" % (files, d))
    saved = os.path.join(d, files[0])
    keys("q")
    wait_for(r"EXIT=0", 20)
    works = sum(1 for line in open(os.path.join(d, "truth.tsv")) if line.startswith("W\t"))
    if works != 60000:
        fail("the trainer wrote %d pieces of work, not 60000" % works)
    out = subprocess.run([GTRACE, "stats", saved, "--report", "summary", "--format", "csv"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    got = int(out[1].split(",")[0])
    if got != 2 * works:
        fail("saved capture holds %d events, the truth %d launches + %d GPU work"
             % (got, works, works))
    shutil.rmtree(d, ignore_errors=True)


def case_livekeep():
    """the live capture streams to a temporary file under $TMPDIR (issue 16):
    the status line shows memory used / budget and the file's size; W asks
    for a name and keeps the capture there (a link, complete at exit); the
    temporary file is gone after q; the kept file holds every event the
    trainer published (its own count, in gtrace run's log)"""
    d = tempfile.mkdtemp(prefix="gtrace-livekeep-")
    g = os.path.abspath(GTRACE)
    cmd = ("cd %s && env TMPDIR=%s LANG=C.UTF-8 TERM=xterm-256color %s run --memory 64M -- %s demo "
           "--trainer --gpus 1 --seconds 3 --rate 20000 --linger 1; echo EXIT=$?; sleep 600"
           % (d, d, g, g))
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "200", "-y", "40", cmd)
    tmux("set-option", "-t", "t", "status", "off", check=False)
    s = wait_for(r"live: 1 proc capturing", 20)
    s = wait_for(r"mem [0-9.]+[kMG]?/64\.0M, file [0-9.]+[kMG]?", 10)
    live = [f for f in os.listdir(d) if f.startswith("gtrace-live-")]
    if len(live) != 1 or not os.path.exists(os.path.join(d, live[0], "capture.gtrace")):
        fail("no temporary capture file under TMPDIR: %s" % os.listdir(d), s)
    keys("W")
    wait_for(r"keep the capture as: gtrace-", 10)
    for _ in range(40):
        keys("BSpace", settle=0)
    type_text("kept.gtrace")
    keys("Enter")
    wait_for(r"saved " + re.escape(os.path.realpath(d)) + r"/kept\.gtrace", 10)   # by its full path
    keys("W")                                # the same name again: refused, nothing replaced
    wait_for(r"keep the capture as:", 10)
    for _ in range(40):
        keys("BSpace", settle=0)
    type_text("kept.gtrace")
    keys("Enter")
    wait_for(r"kept\.gtrace exists; not replaced", 10)
    s = wait_for(r"live: 1 proc (target exited|ended)", 30)
    keys("q")
    s = wait_for(r"EXIT=0", 20)
    if any(f.startswith("gtrace-live-") for f in os.listdir(d)):
        fail("the temporary capture was not removed: %s" % os.listdir(d), s)
    logs = [f for f in os.listdir(d) if f.startswith("gtrace-run-")]
    if len(logs) != 1:
        fail("no log of the trainer in %s" % os.listdir(d), s)
    m = re.search(r"(\d+) events generated, (\d+) published", open(os.path.join(d, logs[0])).read())
    if not m or m.group(1) != m.group(2):
        fail("trainer log: %s" % (m and m.group(0)))
    out = subprocess.run([GTRACE, "stats", os.path.join(d, "kept.gtrace"), "--report", "summary",
                          "--format", "csv"], capture_output=True, text=True)
    if out.returncode != 0 or out.stderr.strip():
        fail("the kept capture does not open cleanly: %s" % out.stderr)
    got = int(out.stdout.splitlines()[1].split(",")[0])
    if got != int(m.group(2)):
        fail("kept capture holds %d events, the trainer published %s" % (got, m.group(2)))
    shutil.rmtree(d, ignore_errors=True)


def start_args(args, w=120, h=40):
    """run `gtrace ARGS` (any subcommand) in a new session, like start()"""
    cmd = "env LANG=C.UTF-8 TERM=xterm-256color %s %s; echo EXIT=$?; sleep 600" % (
        os.path.abspath(GTRACE), args)
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", str(w), "-y", str(h), cmd)
    tmux("set-option", "-t", "t", "status", "off", check=False)


def case_liveblank():
    """an analysis page of a live capture keeps its frame up while it
    recomputes (every 2 s): sampled every 0.1 s for 6 s, the page is always
    on screen, the busy note at most in the status line (the page used to
    blank out but for "computing the overview..." for ~1 s in every 2)"""
    start_args("demo --gpus 4 --rate 400000")
    wait_for(r"GPU 0", 30)
    for key, mark in (("4", "Recommendations"), ("2", "Total Time")):
        keys(key)
        wait_for(mark, 30)
        time.sleep(0.5)
        end = time.time() + 6
        n = 0
        while time.time() < end:
            s = screen()
            if mark not in s:
                time.sleep(0.05)      # a frame still arriving: look once more
                s = screen()
                if mark not in s:
                    fail("page %s blanked while recomputing (sample %d)" % (key, n), s)
            n += 1
            time.sleep(0.1)
    keys("q")
    s = wait_for(r"^EXIT=\d+", 15)
    if "EXIT=0" not in s:
        fail("gtrace demo did not exit with 0", s)


def span_s(txt):
    """seconds of a status-line duration such as 736ms, 2.65s, 12us"""
    m = re.match(r"([\d.]+)(ns|us|ms|s)$", txt)
    return float(m.group(1)) * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[m.group(2)]


def case_ovevidence():
    """Enter on a GPU recommendation ([staggered] on the XPlane profile) zooms
    the trace view to the steps it cites, not just the cursor to the GPU: the
    view goes from the whole capture to about the one step (its length as the
    overview page says), the step's marker on screen"""
    path = os.path.join(TESTDATA, "tf", "tf_bert_multiworker.xplane.pb")
    if not os.path.exists(path):
        skip("test data missing: " + path)
    start(path, 120, 40)
    s = wait_for(r"GPU 4", 30)
    whole = span_s(re.search(r"view \+\S+ \((\S+)\)", status_line(s)).group(1))
    keys("4")
    s = wait_for(r"\[staggered\] GPU 6", 30)
    step = span_s(re.search(r"Average step\s+(\S+) over 1 step \(", s).group(1))
    recs = re.findall(r"^\s+(?:!!|! |- ) \[([a-z-]+)\]", s, re.M)
    for _ in range(recs.index("staggered")):
        keys("j")
    keys("Enter")
    s = wait_for(r"evidence: staggered")
    if not re.search(r"evidence: staggered, steps 0-0, cursor on rank 0 GPU 6", s):
        fail("the status does not name the steps shown", s)
    view = span_s(re.search(r"view \+\S+ \((\S+)\)", status_line(s)).group(1))
    if not (step <= view <= 1.25 * step) or view >= whole:
        fail("view spans %.3fs: not zoomed to step 0 (%.3fs; whole %.3fs)" % (view, step, whole), s)
    if not re.search(r"^steps\s+\|?#0", s, re.M):
        fail("step 0's marker is not on screen", s)
    quit_ok()


def case_helpbox():
    """the ? box is as wide as its longest line where the terminal allows
    (120 columns: every line whole) and wraps its lines on 80x24 (the words
    at a line's end still shown); pause is listed as Space and p"""
    longest = "mark a range (twice; on another lane: an area over the lanes between), zoom to it; Esc clears"
    for w, h in ((120, 40), (80, 24)):
        tmux("kill-server", check=False)
        start(sim("balanced", gpus=2, steps=4), w, h)
        wait_for(r"GPU 0")
        keys("?")
        s = wait_for(r"keys: Trace")
        flat = re.sub(r"\s+", " ", s)
        if w == 120 and longest not in s:
            fail("%dx%d: the longest help line is cut" % (w, h), s)
        if w == 80 and (longest not in flat or "Esc clears" not in s):
            fail("%dx%d: the longest help line is not wrapped whole" % (w, h), s)
        if not re.search(r"Space p\s+pause/resume", s):
            fail("%dx%d: pause is not listed as Space and p" % (w, h), s)
        for want in ("q  quit", "this help", "^L  redraw", "Esc  back", "Tab S-Tab"):
            if want not in s:
                fail("%dx%d: the help lacks '%s'" % (w, h, want), s)
        keys("?")
        wait_for(r"keys: Trace", absent=True)
        quit_ok()


WHOLE_FIELDS = [r"\S+ ev", r"[\d.]+(ns|us|ms|s)", r"dropped \d+",
                r"live: \d+ procs? [a-z]+( [a-z]+)?( \(view paused\))?(, [\d.]+[kM]? ev/s"
                r"(, [\d.]+[kM]? events(, [\d.]+[kM]? lost( \(\+\d+ activity buffers? taken by another CUPTI client\))?"
                r"(, ring \S+: [\d.]+[kM]? ev discarded \([^)]*\))?(, mem [\d.]+[kMG]?(/[\d.]+[kMG]?)?"
                r"(, file [\d.]+[kMG]?)?)?)?)?)?",
                r"(view|range) \+\S+ \(\S+\)( paused| follow)?", r"cursor \+\S+",
                r"/nccl: match \d+ of \d+ \(case-insensitive\)(, wrapped to the (start|end))?"]


def check_fields(s, what):
    """every ' | '-separated field of the status line is one of WHOLE_FIELDS
    (after the source name): none is cut short"""
    parts = [p.strip() for p in status_line(s).split(" | ")]
    for p in parts[1:]:
        if not any(re.fullmatch(w, p) for w in WHOLE_FIELDS):
            fail("%s: the status field '%s' is cut or unknown" % (what, p), s)


def case_ovcount():
    """the overview's event count has thousands separators, as stats' tables
    (the ResNet-50 trace holds over 10,000 events)"""
    if not os.path.exists(RESNET):
        skip("test data missing: " + RESNET)
    start(RESNET, 200, 40)
    wait_for(r"GPU 0", 30)
    keys("4")
    s = wait_for(r"Recommendations", 30)
    if not re.search(r"\|  \d{1,3}(,\d{3})+ events over ", s):
        fail("the event count has no thousands separators", s)


def case_statusfit():
    """the live demo's status line at 120 columns, paused and during a
    search: fields whole or not at all (it read "..., 0  | view paused" with
    "lost" cut, and "view +2 | /nccl: match ...")"""
    start_args("demo --gpus 4 --rate 400000", 120, 40)
    wait_for(r"GPU 0", 30)
    wait_for(r"\d[kM] events")
    keys("Space")
    clear_msg()
    s = wait_for(r"\) paused")
    check_fields(s, "paused")
    keys("Space")
    wait_for(r"\) follow")
    keys("/")
    type_text("nccl")
    keys("Enter")
    s = wait_for(r"/nccl: match \d+")
    check_fields(s, "search")
    if not re.search(r"(view|range) \+\S+ \(\S+\)", status_line(s)):
        fail("the range is not shown beside the search message", s)
    keys("q")
    s = wait_for(r"^EXIT=\d+", 15)
    if "EXIT=0" not in s:
        fail("gtrace demo did not exit with 0", s)


def fmt_dur_us(us):
    """a duration in us as the viewer prints it (3 significant digits)"""
    ns = us * 1000.0
    for unit, div in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= div:
            v = ns / div
            return ("%.0f" if v >= 100 else "%.1f" if v >= 10 else "%.2f") % v + unit
    return "%.0fns" % ns


def case_ops():
    """the Operators page (5) on ResNet-50 (workers 0): the top row is the TensorBoard
    plugin's first operator (kineto/expected/tb_plugin_operators_nw0.json); Enter on
    aten::cudnn_convolution lists its calls, count and host total as an independent pass
    over the raw JSON finds them (tests/tui/ops_truth.py), the longest first; K lists the
    GPU work that call launched (count and total from the same pass); Enter lands on it in
    the trace view; Esc walks back to the table"""
    import json
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import ops_truth
    path = resnet()
    exp = os.path.join(TESTDATA, "kineto", "expected", "tb_plugin_operators_nw0.json")
    need_testdata(exp)
    with open(exp) as f:
        top = max(json.load(f)["data"]["data"], key=lambda r: r["device_self_duration"])
    evs = ops_truth.load(path)
    ncalls, host_us, longest = ops_truth.op_calls(evs, "aten::cudnn_convolution")
    nwork, work_us = ops_truth.call_work(evs, longest)
    start(path)
    wait_for(r"GPU 0", 30)
    keys("5")
    s = wait_for(r"Device Self Duration \(us\) (▼|v)")
    row = next((l for l in s.splitlines()[3:4]), "")
    want = r"^\s*%d\s+%.1f\s" % (top["calls"], top["device_self_duration"])
    if not re.match(want, row) or top["name"][-12:] not in row:
        fail("top operator row %r, the plugin's: %s" % (row, top), s)
    keys("/")
    type_text("^aten::cudnn_convolution$")
    keys("Enter")
    s = wait_for(r"1 of \d+ rows")
    keys("Enter")
    s = wait_for(r"calls of aten::cudnn_convolution")
    title = "%d calls, host total %s" % (ncalls, fmt_dur_us(host_us))
    if title not in s:
        fail("calls title: want %r" % title, s)
    first = re.search(r"^\s+1\s+\S+\s+(\S+)\s+r0 thread", s, re.M)
    if not first or first.group(1) != fmt_dur_us(float(longest["dur"])):
        fail("the longest call first: want %s" % fmt_dur_us(float(longest["dur"])), s)
    keys("K")
    s = wait_for(r"GPU work of call 1 of aten::cudnn_convolution")
    title = "%d launched, %s" % (nwork, fmt_dur_us(work_us))
    if title not in s:
        fail("GPU work title: want %r" % title, s)
    if len(re.findall(r"^\s+\d+\s+\S+\s+\S+\s+r0 GPU 0 stream", s, re.M)) != nwork:
        fail("want %d GPU work rows" % nwork, s)
    keys("Enter")
    s = wait_for(r"correlation \d+: launched by")
    keys("5")
    wait_for(r"GPU work of call 1")
    keys("Escape", "Escape")
    s = wait_for(r"operators  \|  1 of \d+ rows")
    keys("Escape")
    wait_for(r"operators  \|  (\d+) of \1 rows")
    quit_ok()


def ops_calls(s):
    m = re.search(r"^ calls of (\S+)  \|  (\d+) calls", s, re.M)
    return (m.group(1), int(m.group(2))) if m else (None, -1)


def case_liveops():
    """the Operators page in a live view: an operator's open call list stays open
    across refreshes and grows in place (the simulator plants one call of each
    operator per step and GPU); paused, it holds still; Esc is back on the table
    with that operator selected"""
    start_live(400)
    wait_for(r"live: recording, step \d+ of 400")
    keys("5")
    wait_for(r"Device Self Duration")
    for attempt in range(3):   # a key sent while the page computes can be lost
        keys("Enter")
        end = time.time() + 4
        while time.time() < end and ops_calls(screen())[0] is None:
            time.sleep(0.1)
        if ops_calls(screen())[0]:
            break
    s = wait_for(r"^ calls of ")
    name, n0 = ops_calls(s)
    wait_steps(20)
    time.sleep(2.5)
    s = screen()
    name1, n1 = ops_calls(s)
    if name1 != name:
        fail("the call list closed or changed operator on a live update (was %s)" % name, s)
    if n1 <= n0:
        fail("the open call list did not grow (%d, then %d calls)" % (n0, n1), s)
    keys("p")
    wait_for(r"live: paused")
    time.sleep(2.5)
    n2 = ops_calls(screen())[1]
    wait_steps(20)
    time.sleep(2.5)
    s = screen()
    if ops_calls(s) != (name, n2):
        fail("the paused call list changed (%s, %d calls, then %s)" % (name, n2, ops_calls(s)), s)
    keys("Escape")
    s = wait_for(r"operators  \|")
    sel = [l for l in s.splitlines() if name in l]
    if not sel:
        fail("back on the table, %s is not shown" % name, s)
    keys("p", "q")
    s = wait_for(r"^EXIT=\d+", 10)
    if "EXIT=0" not in s:
        fail("live driver did not exit with 0", s)


def mem_page(path):
    """open PATH, the Memory page (6); return its screen"""
    start(path)
    wait_for(r"GPU 0")
    keys("6")
    return wait_for(r"^\s+step\s+start\s+end\s+peak\s+growth")


def to_ms(text):
    v, u = re.match(r"([0-9.]+)(ns|us|ms|s)$", text).groups()
    return float(v) * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[u]


def case_memory():
    """the Memory page (6) on the simulator's planted allocations (docs/simulator.md
    "Memory"): with `--memory leak` every step grows by the planted 8 MiB, the peak is in
    the last step and 10 x 8 MiB above the `steady` run's peak (same op, step 0, no growth);
    the peak column is marked; Enter zooms the trace view around the peak; the overview's
    memory row shows the same peak"""
    peaks = {}
    for pat in ("steady", "leak"):
        path = os.path.join(TMP, "mem-%s.gtrace" % pat)
        r = subprocess.run([GTRACE, "sim", "--force", "-o", path, "--gpus", "2", "--steps", "10",
                            "--memory", pat], capture_output=True, text=True)
        if r.returncode:
            fail("gtrace sim --memory failed: " + r.stderr.strip())
        s = mem_page(path)
        m = re.search(r"r0 GPU 0: peak ([0-9.]+) MiB at \+(\S+) in step (\d+), operator (\S+);", s)
        if not m:
            fail("%s: no peak line" % pat, s)
        peaks[pat] = (float(m.group(1)), m.group(4))
        want_step = "9" if pat == "leak" else "0"
        if m.group(3) != want_step:
            fail("%s: peak in step %s, planted in step %s" % (pat, m.group(3), want_step), s)
        rows = re.findall(r"^\s+(\d+)\s+(\S+ \S+)\s+(\S+ \S+)\s+(\S+ \S+)\s+(\S+ \S+)$", s, re.M)
        if len(rows) != 10:
            fail("%s: want 10 step rows" % pat, s)
        grow = "8.00 MiB" if pat == "leak" else "0 B"
        if any(g != grow for *_, g in rows):
            fail("%s: every step should grow by %s" % (pat, grow), s)
        if pat == "leak" and rows[-1][2] != "80.00 MiB":
            fail("leak: 80.00 MiB allocated after 10 steps, got %s" % rows[-1][2], s)
        if "^peak" not in s and "peak^" not in s:
            fail("%s: the peak column is not marked" % pat, s)
        if pat == "leak":
            peak_ms = to_ms(m.group(2))
            keys("Enter")
            s = wait_for(r"view \+(\S+) \((\S+)\)")
            v0, vw = (to_ms(x) for x in re.search(r"view \+(\S+) \((\S+)\)", s).groups())
            if not v0 - 0.01 <= peak_ms <= v0 + vw + 0.01:
                fail("the trace view [%g, +%g] ms does not hold the peak at %g ms"
                     % (v0, vw, peak_ms), s)
        # the overview's memory row: the same peak (whole MiB)
        keys("4")
        s = wait_for(r"mem r0 GPU0\s+\d+MiB ")
        ov = int(re.search(r"mem r0 GPU0\s+(\d+)MiB ", s).group(1))
        if ov != round(peaks[pat][0]):
            fail("%s: overview memory row %d MiB, the peak %.2f MiB" % (pat, ov, peaks[pat][0]), s)
        quit_ok()
        tmux("kill-server", check=False)
    if abs(peaks["leak"][0] - peaks["steady"][0] - 80.0) > 0.005:
        fail("leak peak %.2f MiB, steady %.2f MiB: want 10 x 8 MiB apart"
             % (peaks["leak"][0], peaks["steady"][0]))
    if peaks["leak"][1] != peaks["steady"][1]:
        fail("the peak operator differs: %s / %s" % (peaks["leak"][1], peaks["steady"][1]))


@group("cudaemu")
def case_emuended():
    """gtrace run on the emulator's trainer that installs its own CUPTI clock
    mid-run, as torch.profiler does (--tsc-at): the live view's status line
    says the process ended its capture and why, in one line"""
    emu = os.path.abspath(os.path.join(BUILD, "tests", "cudaemu"))
    trainer = os.path.join(emu, "cudaemu_trainer")
    if not os.path.exists(trainer):
        fail("no emulator trainer at " + trainer)
    d = tempfile.mkdtemp(prefix="gtrace-emuended-")
    cmd = ("cd %s && env LANG=C.UTF-8 TERM=xterm-256color LD_LIBRARY_PATH=%s %s run -- %s "
           "--out - --threads 1 --work 20000 --rate 5000 --tsc-at 2000; echo EXIT=$?; sleep 600"
           % (d, emu, os.path.abspath(GTRACE), trainer))
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "250", "-y", "40", cmd)
    tmux("set-option", "-t", "t", "status", "off", check=False)
    # (the line is cut to the terminal's width beside the view's own parts)
    # the message comes when the target says it ended; "ended" in the
    # status once the ring is drained (a poll or more later)
    wait_for(r"live: 1 proc ended.*process \d+ ended its capture: another CUPTI client \(torch\.profiler\?\)", 30)
    keys("q")
    wait_for(r"EXIT=0", 20)
    shutil.rmtree(d, ignore_errors=True)


@group("cudaemu")
def case_emukineto():
    """gtrace run on the emulator's trainer where a Kineto-like client takes
    CUPTI's buffer callbacks mid-run (--kineto-at): the live view's status
    line says how many of gtrace's buffers it took and why the capture ended"""
    emu = os.path.abspath(os.path.join(BUILD, "tests", "cudaemu"))
    trainer = os.path.join(emu, "cudaemu_trainer")
    if not os.path.exists(trainer):
        fail("no emulator trainer at " + trainer)
    d = tempfile.mkdtemp(prefix="gtrace-emukineto-")
    cmd = ("cd %s && env LANG=C.UTF-8 TERM=xterm-256color LD_LIBRARY_PATH=%s "
           "GTRACE_CLIENT_WATCH_MS=800 %s run -- %s --out - --threads 1 --work 20000 "
           "--rate 5000 --kineto-at 2000,12000; echo EXIT=$?; sleep 600"
           % (d, emu, os.path.abspath(GTRACE), trainer))
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "300", "-y", "40", cmd)
    tmux("set-option", "-t", "t", "status", "off", check=False)
    # (the reason itself is cut to the terminal's width here; the recorder's
    # line has it whole: cudaemu-record kineto_takes_over_counted_and_said)
    # (memory and file size sit between the lost count and the reason)
    # the buffers it took: those CUPTI held for gtrace at the takeover.  A
    # forced flush of the capture (the live view's) just before it leaves
    # none (seen once on a loaded machine: "0 lost", rightly no note)
    s = wait_for(r"live: 1 proc ended.*, (0 lost|\d+ lost \(\+[1-9]\d* activity buffers? taken by another "
                 r"CUPTI client\))[^|]* \| process \d+ ended its capt", 30)
    keys("q")
    wait_for(r"EXIT=0", 20)
    shutil.rmtree(d, ignore_errors=True)


def netlive_session(cmd, w=220, h=40):
    """a fresh tmux server and session running cmd (the last session's end
    stops its server, and a new one can lose that race: try again)"""
    tmux("kill-server", check=False)
    for attempt in range(3):
        r = subprocess.run(["tmux", "-L", SOCK, "-f", "/dev/null", "new-session", "-d", "-s", "t",
                            "-x", str(w), "-y", str(h), cmd], capture_output=True, text=True)
        if r.returncode == 0:
            break
        tmux("kill-server", check=False)
        time.sleep(0.3)
    else:
        fail("tmux new-session: %s" % r.stderr.strip())
    tmux("set-option", "-t", "t", "status", "off", check=False)


@group("net")
def case_netlive():
    """open --live (issue 17): a node streaming beside a node that stalls and
    a node that sends garbage: the view grows, the stalled node is named
    with a growing silence (the viewer keeps drawing), the bad one ended
    with its line; q ends it at once"""
    g = os.path.abspath(GTRACE)
    node = ("GTRACE_HOSTNAME=nodeA RANK=0 %s record -q -o - -- %s sim --live --ranks 1 --gpus 2 "
            "--seconds 20 --linger 0 2>/dev/null" % (g, g))
    cmd = ("env LANG=C.UTF-8 TERM=xterm-256color %s open --live '%s' 'sleep 600' 'echo garbage'; "
           "echo EXIT=$?; sleep 600" % (g, node))
    netlive_session(cmd)
    s = wait_for(r"nodes: 2 receiving, 1 ended", 20)
    # the ended node and why in the status's first part (kept when the line is
    # cut; trial 2 saw only "1 ended"), named by its command's first word
    if "1 ended (echo: not a gtrace stream" not in s:
        fail("the garbage node is not named with its problem", s)
    # the quiet node's stall (5 s after the start) and the streaming node's
    # GPUs arrive independently: wait for both (its host calls come first)
    s = wait_for(r"(?s)GPU 0 .*sleep: no data for \d+ s", 30)
    n = int(re.search(r"sleep: no data for (\d+) s", s).group(1))
    m = re.search(r"nodes: 2 receiving, 1 ended \(.*?\), \S+ ev/s, (\S+) events", s)
    if not m:
        fail("the status line has no event count", s)
    ev0 = m.group(1)
    deadline = time.time() + 15
    while True:
        s = screen()
        m2 = re.search(r"sleep: no data for (\d+) s", s)
        m3 = re.search(r"nodes: 2 receiving, 1 ended \(.*?\), \S+ ev/s, (\S+) events", s)
        if m2 and int(m2.group(1)) >= n + 2 and m3 and m3.group(1) != ev0:
            break
        if time.time() > deadline:
            fail("the view stopped drawing while a node stalled", s)
        time.sleep(0.2)
    t = time.time()
    keys("q")
    s = wait_for(r"^EXIT=\d+", 10)
    if "EXIT=0" not in s:
        fail("open --live did not exit with 0", s)
    if "gtrace: node echo failed: not a gtrace stream" not in s:
        fail("after quitting, stderr does not name the failed node", s)
    if time.time() - t > 5:
        fail("quitting waited %.1f s for the stalled node" % (time.time() - t), s)
    # C applies the residual clock offset between two nodes (planted: 3 ms)
    t0 = time.time_ns()
    node = ("GTRACE_SIM_T0_NS=%d GTRACE_HOSTNAME=%s RANK=%d GTRACE_TEST_CLOCK_OFFSET_NS=%d %s "
            "record -q -o - -- %s sim --live --ranks 1 --gpus 2 --seconds 30 --linger 0 2>/dev/null")
    cmd = ("env LANG=C.UTF-8 TERM=xterm-256color %s open --live '%s' '%s'; echo EXIT=$?; sleep 600"
           % (g, node % (t0, "nodeA", 0, 0, g, g), node % (t0, "nodeB", 1, 3000000, g, g)))
    netlive_session(cmd)
    wait_for(r"clock: nodeB \+3\.000 ms vs nodeA \(\d+ collectives, \S+ ms; not applied\)", 30)
    keys("C")
    clear_msg()
    wait_for(r"clock: nodeB \+3\.000 ms vs nodeA \(\d+ collectives, \S+ ms; applied\)", 15)
    keys("q")
    s = wait_for(r"^EXIT=\d+", 10)
    if "EXIT=0" not in s:
        fail("open --live (two nodes) did not exit with 0", s)
    # `open -`: the stream on stdin, the keys from the terminal
    cmd = ("GTRACE_HOSTNAME=nodeS %s record -q -o - -- %s sim --live --seconds 3 --linger 0 "
           "2>/dev/null | env LANG=C.UTF-8 TERM=xterm-256color %s open -; echo EXIT=$?; sleep 600"
           % (g, g, g))
    netlive_session(cmd, w=200)
    s = wait_for(r"nodes: 1 receiving, \S+ ev/s, [1-9]\S* events", 20)
    # the host's calls come before their kernels' activity buffers (CI, ASan:
    # the first frame with events held only the host thread): the GPU lanes
    # must join the view as their events arrive
    deadline = time.time() + 15
    while "GPU 0" not in s:
        if time.time() > deadline:
            fail("open -: the stream's GPUs never joined the view", s)
        time.sleep(0.2)
        s = screen()
    # W asks for a name as every live view does (trial 4: it saved under
    # gtrace-TIME.gtrace at once, and the name typed next went to the keys)
    keys("W")
    wait_for(r"keep the capture as: gtrace-\d+\.gtrace", 10)
    d = tempfile.mkdtemp(prefix="gtrace-netkeep-")
    kept = os.path.join(os.path.realpath(d), "kept.gtrace")
    keys("C-u")
    type_text(kept)
    keys("Enter")
    s = wait_for(r"saved " + re.escape(kept) + r", \d+ events", 10)
    n_kept = int(re.search(r"saved " + re.escape(kept) + r", (\d+) events", s).group(1))
    out = subprocess.run([GTRACE, "stats", kept, "--report", "summary", "--format", "csv"],
                         capture_output=True, text=True)
    m = re.search(r"^(\d+),", out.stdout.splitlines()[1]) if out.returncode == 0 else None
    if not m or int(m.group(1)) != n_kept or not n_kept:
        fail("W: the kept file does not hold the %d events it says (%s)" % (n_kept, out.stdout[:300]), s)
    shutil.rmtree(d, ignore_errors=True)
    s = wait_for(r"nodes: 0 receiving, 1 ended", 20)
    keys("q")
    s = wait_for(r"^EXIT=\d+", 10)
    if "EXIT=0" not in s:
        fail("open - did not exit with 0", s)
    # q before the stream on stdin ends: the user left it, no node "failed"
    # (trial 4: "gtrace: node vm failed: cut off after N events" after q)
    cmd = ("GTRACE_HOSTNAME=nodeS %s record -q -o - -- %s sim --live --seconds 30 --linger 0 "
           "2>/dev/null | env LANG=C.UTF-8 TERM=xterm-256color %s open -; echo EXIT=$?; sleep 600"
           % (g, g, g))
    netlive_session(cmd, w=200)
    wait_for(r"nodes: 1 receiving, \S+ ev/s, [1-9]\S* events", 20)
    keys("q")
    s = wait_for(r"^EXIT=\d+", 10)
    if "EXIT=0" not in s or "failed" in s:
        fail("q on open - : exit 0 and no node named failed", s)
    # the files of one job (open run-*.gtrace): the offset is shown, and C
    # says how to apply it (trial 4: it said the view was not a multi-node one)
    d = tempfile.mkdtemp(prefix="gtrace-netfiles-")
    t0 = time.time_ns()
    fnode = (node.replace("record -q -o -", "record -q -o %s/run-%%%%h.gtrace" % d)
             .replace("--seconds 30", "--seconds 3"))
    procs = [subprocess.Popen(["sh", "-c", fnode % (t0, h, rk, off, g, g)])
             for h, rk, off in (("nodeA", 0, 0), ("nodeB", 1, 3000000))]
    for p in procs:
        p.wait(timeout=120)
    files = sorted(os.path.join(d, f) for f in os.listdir(d))
    if len(files) != 2:
        fail("the two node files were not written: %s" % files)
    cmd = ("env LANG=C.UTF-8 TERM=xterm-256color %s open %s; echo EXIT=$?; sleep 600"
           % (g, " ".join(files)))
    netlive_session(cmd, w=220)
    wait_for(r"clock: nodeB \+3\.000 ms vs nodeA \(\d+ collectives, \S+ ms; not applied\)", 20)
    keys("C")
    wait_for(r"open them with --align-clocks to apply the clock offsets", 10)
    keys("q")
    wait_for(r"^EXIT=0", 10)
    cmd = ("env LANG=C.UTF-8 TERM=xterm-256color %s open --align-clocks %s; echo EXIT=$?; "
           "sleep 600" % (g, " ".join(files)))
    netlive_session(cmd, w=220)
    wait_for(r"clock: nodeB \+3\.000 ms vs nodeA \(\d+ collectives, \S+ ms; applied\)", 20)
    keys("q")
    wait_for(r"^EXIT=0", 10)
    shutil.rmtree(d, ignore_errors=True)


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--list":
        # the meson files' list of tests (configure time): nothing else runs
        shutil.rmtree(TMP, ignore_errors=True)
        for name in CASES:
            if GROUPS.get(name, "viewer") == sys.argv[2]:
                print(name)
        return 0
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print("usage: tui_tmux.py " + "|".join(CASES) + "\n       tui_tmux.py --list "
              "viewer|net|cudaemu|capture")
        return 2
    if not shutil.which("tmux"):
        skip("tmux is not installed")
    if not os.path.exists(GTRACE):
        fail("no binary at " + GTRACE)
    try:
        CASES[sys.argv[1]]()
    finally:
        tmux("kill-server", check=False)
        shutil.rmtree(TMP, ignore_errors=True)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
