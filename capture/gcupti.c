/*
 * gcupti.c - CUPTI activity capture (capture/gcupti.h).
 *
 * Threads: CUPTI's buffer callbacks only move buffer indices between a
 * free stack and a completed queue (a short critical section of our own
 * mutex, never allocation, never a CUPTI call); the drain thread parses
 * completed buffers, converts and publishes; the control thread enables and
 * disables the activity kinds.  Losses: CUPTI's dropped-record count,
 * buffer requests we could not serve, zero-timestamp records.
 */
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cupti.h>
#include "gtrace_config.h"
#include "convert.h"
#include "gcupti.h"
#include "gcwatch.h"

#define GC_NBUF 32
#define GC_BUF_BYTES (4u << 20)

struct gc_fns {
	CUptiResult (*GetVersion)(uint32_t *);
	CUptiResult (*GetTimestamp)(uint64_t *);
	CUptiResult (*GetResultString)(CUptiResult, const char **);
	CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*Subscribe_v2)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
				    CUpti_SubscriberParams *);
	CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle);
	CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char **);
	CUptiResult (*RegisterCallbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*Enable)(CUpti_ActivityKind);
	CUptiResult (*Disable)(CUpti_ActivityKind);
	CUptiResult (*EnableAndDump)(CUpti_ActivityKind);
	CUptiResult (*FlushAll)(uint32_t);
	CUptiResult (*FlushPeriod)(uint32_t);
	CUptiResult (*GetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*GetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
	CUptiResult (*EnableRuntimeApi)(CUpti_CallbackId, uint8_t);
	CUptiResult (*EnableDriverApi)(CUpti_CallbackId, uint8_t);
	CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType);
	CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
				      CUpti_CallbackId);
	CUptiResult (*GetCallbackState)(uint32_t *, CUpti_SubscriberHandle, CUpti_CallbackDomain,
					CUpti_CallbackId);
};

static struct {
	void *lib;
	struct gc_fns f;
	int registered;
	CUpti_SubscriberHandle sub;
	int subscribed;
	/* buffer pool */
	uint8_t *pool;
	int nbuf;                    /* buffers in the pool (GTRACE_CUPTI_BUFFERS) */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int free_stack[GC_NBUF];
	int n_free;
	int done_q[GC_NBUF];
	size_t done_valid[GC_NBUF];
	int q_head, q_n;
	_Atomic uint64_t declined;
	_Atomic uint64_t completed;  /* buffers handed to the drain thread */
	_Atomic uint64_t drained;    /* buffers it has finished */
	_Atomic int64_t outstanding; /* pool buffers CUPTI holds (handed out, not back) */
	_Atomic uint64_t read_errors;   /* record walks CUPTI ended with an error */
	int foreign_clock;           /* drain thread: CUPTI's clock was replaced */
	_Atomic uint64_t foreign_records;   /* records dropped for it */
	int enabled;
	int prepared;                /* kernel tracing kept on while dormant (graphs) */
	_Atomic int accept;          /* buffer requests served (a capture runs) */
	/* another CUPTI client (capture/gcwatch.h) */
	struct gcwatch watch;
	int watching;                /* our launch callbacks are on: the watch can judge */
	_Atomic int taken;           /* it took CUPTI: nothing more is published */
	_Atomic uint64_t foreign_buffers;   /* its buffers completed to us (not ours: ignored) */
	volatile sig_atomic_t forked;   /* this is a fork()ed child: stay inert */
	/* drain thread */
	pthread_t drain;
	int drain_started;
	int drain_stop;              /* under lock: the drain thread ends (exit) */
	struct convert cv;
	const char *api_names[2][1024];
	int gpus;
	int major;                   /* CUPTI's record layouts: 12 or 13 */
} gc = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

void *gcupti_lib(void)
{
	return gc.lib;
}

/* dl_iterate_phdr: the path of a libcupti.so.12 / .so.13 already mapped */
static int mapped_cupti(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	const char *p = info->dlpi_name ? strstr(info->dlpi_name, "libcupti.so.") : NULL;
	if (!p || (atoi(p + 12) != 12 && atoi(p + 12) != 13))
		return 0;
	*(const char **)data = info->dlpi_name;
	return 1;
}

void *gcupti_load(char *reason, size_t len)
{
	if (gc.lib)
		return gc.lib;
	/* the copy already in the process comes first, whichever major (a
	 * CUDA 12 PyTorch wheel maps libcupti.so.12): a second CUPTI would
	 * fight it; gcupti_probe decodes that major's records */
	const char *mapped = NULL;
	dl_iterate_phdr(mapped_cupti, &mapped);
	if (mapped)
		gc.lib = dlopen(mapped, RTLD_NOW | RTLD_NOLOAD);
	static const char *const names[] = { "libcupti.so.13", "libcupti.so.12", "libcupti.so" };
	for (size_t i = 0; i < 3 && !gc.lib; i++)
		gc.lib = dlopen(names[i], RTLD_NOW | RTLD_NOLOAD);
	for (size_t i = 0; i < 3 && !gc.lib; i++)
		gc.lib = dlopen(names[i], RTLD_NOW);
	const char *home = getenv("CUDA_HOME");
	const char *dirs[] = { home, GTRACE_CUDA_HOME };
	static const char *const subs[] = { "lib64", "lib", "extras/CUPTI/lib64" };
	for (size_t d = 0; d < 2 && !gc.lib; d++) {
		for (size_t s = 0; s < 3 && dirs[d] && !gc.lib; s++) {
			char p[512];
			snprintf(p, sizeof(p), "%s/%s/libcupti.so.13", dirs[d], subs[s]);
			gc.lib = dlopen(p, RTLD_NOW);
		}
	}
	if (!gc.lib)
		snprintf(reason, len, "libcupti.so.13 not found (set CUDA_HOME or LD_LIBRARY_PATH)");
	return gc.lib;
}

/* record layouts of CUPTI API version v: 13 (130000..), 12 (CUDA 12.0 is
 * v19 .. 12.9 Update 1 v28, cupti_version.h; later 12.x updates taken as
 * 12 too), 0 for versions we cannot decode */
static int cupti_major(uint32_t v)
{
	if (v / 10000 == 13)
		return 13;
	if (v >= 19 && v < 10000)
		return 12;
	return 0;
}

static void gc_forked(void);

#define SYM(name) (*(void **)&gc.f.name = dlsym(gc.lib, "cupti" #name))

static const char *res_str(CUptiResult r)
{
	const char *s = NULL;
	if (gc.f.GetResultString && gc.f.GetResultString(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "CUPTI error";
}

int gcupti_probe(char *reason, size_t len)
{
	/* the driver first: without it CUPTI only answers CUPTI_ERROR_UNKNOWN */
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!cuda)
		cuda = dlopen("libcuda.so.1", RTLD_NOW);
	if (!cuda) {
		snprintf(reason, len, "no CUDA driver (libcuda.so.1 cannot be loaded)");
		return -ENODEV;
	}
	if (!gcupti_load(reason, len))
		return -ENOENT;
	SYM(GetVersion); SYM(GetTimestamp); SYM(GetResultString); SYM(Subscribe);
	SYM(Unsubscribe); SYM(GetCallbackName); SYM(Subscribe_v2);
	*(void **)&gc.f.RegisterCallbacks = dlsym(gc.lib, "cuptiActivityRegisterCallbacks");
	*(void **)&gc.f.Enable = dlsym(gc.lib, "cuptiActivityEnable");
	*(void **)&gc.f.Disable = dlsym(gc.lib, "cuptiActivityDisable");
	*(void **)&gc.f.EnableAndDump = dlsym(gc.lib, "cuptiActivityEnableAndDump");
	*(void **)&gc.f.FlushAll = dlsym(gc.lib, "cuptiActivityFlushAll");
	*(void **)&gc.f.FlushPeriod = dlsym(gc.lib, "cuptiActivityFlushPeriod");
	*(void **)&gc.f.GetNextRecord = dlsym(gc.lib, "cuptiActivityGetNextRecord");
	*(void **)&gc.f.GetNumDroppedRecords = dlsym(gc.lib, "cuptiActivityGetNumDroppedRecords");
	*(void **)&gc.f.EnableRuntimeApi = dlsym(gc.lib, "cuptiActivityEnableRuntimeApi");
	*(void **)&gc.f.EnableDriverApi = dlsym(gc.lib, "cuptiActivityEnableDriverApi");
	SYM(SetThreadIdType);
	SYM(EnableCallback);
	SYM(GetCallbackState);
	if (!gc.f.GetVersion || !gc.f.GetTimestamp || !gc.f.Subscribe || !gc.f.Unsubscribe ||
	    !gc.f.RegisterCallbacks || !gc.f.Enable || !gc.f.Disable || !gc.f.FlushAll ||
	    !gc.f.GetNextRecord || !gc.f.GetNumDroppedRecords) {
		snprintf(reason, len, "libcupti lacks the activity API we need");
		return -ENOSYS;
	}
	uint32_t v = 0;
	CUptiResult r = gc.f.GetVersion(&v);
	if (r == CUPTI_SUCCESS && !cupti_major(v)) {
		snprintf(reason, len, "CUPTI API version %u in this process; gtrace reads CUDA 12 "
			 "(v19..) and CUDA 13 (v13xxxx) records", v);
		return -EPROTO;
	}
	gc.major = r == CUPTI_SUCCESS ? cupti_major(v) : 13;
	static int atfork_done;
	if (!atfork_done && pthread_atfork(NULL, NULL, gc_forked) == 0)
		atfork_done = 1;
	uint64_t ts;
	r = gc.f.GetTimestamp(&ts);
	if (r != CUPTI_SUCCESS) {
		snprintf(reason, len, "%s (CUPTI: %s)",
			 r == CUPTI_ERROR_UNKNOWN ? "no CUDA driver" : "CUPTI unusable", res_str(r));
		return -ENODEV;
	}
	return 0;
}

/* ---- CUPTI callbacks: never block long, never allocate ---- */

static void CUPTIAPI buf_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	if (gc.forked) {
		/* a fork()ed child's CUPTI (an NVTX range in a DataLoader
		 * worker): no drain thread here, gc.lock maybe held by a thread
		 * that does not exist in it.  Declined without a lock, counted
		 * in the ring the child shares with its parent (atomics only):
		 * the child's records are not captured, and say so. */
		*buffer = NULL;
		*size = 0;
		*max_records = 0;
		gt_agent_forked_declined();
		return;
	}
	/* a request, served or not, shows our callbacks are still registered */
	atomic_fetch_add_explicit(&gc.watch.traffic, 1, memory_order_relaxed);
	int i = -1;
	if (atomic_load_explicit(&gc.accept, memory_order_relaxed)) {
		pthread_mutex_lock(&gc.lock);
		i = gc.n_free ? gc.free_stack[--gc.n_free] : -1;
		pthread_mutex_unlock(&gc.lock);
	}
	*max_records = 0;
	if (i < 0) {
		atomic_fetch_add_explicit(&gc.declined, 1, memory_order_relaxed);
		*buffer = NULL;
		*size = 0;
		return;
	}
	atomic_fetch_add(&gc.outstanding, 1);
	*buffer = gc.pool + (size_t)i * GC_BUF_BYTES;
	*size = GC_BUF_BYTES;
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				   size_t valid)
{
	(void)ctx;
	(void)stream;
	(void)size;
	if (gc.forked)
		return;              /* nothing of a child's is ours to drain */
	atomic_fetch_add_explicit(&gc.watch.traffic, 1, memory_order_relaxed);
	if (!buffer || buffer < gc.pool || buffer >= gc.pool + (size_t)gc.nbuf * GC_BUF_BYTES) {
		/* another client's (registered before our start): not ours
		 * to parse or free; counted (status foreign_buffers) */
		if (buffer)
			atomic_fetch_add(&gc.foreign_buffers, 1);
		return;
	}
	int i = (int)((size_t)(buffer - gc.pool) / GC_BUF_BYTES);
	atomic_fetch_sub(&gc.outstanding, 1);
	pthread_mutex_lock(&gc.lock);
	int slot = (gc.q_head + gc.q_n) % GC_NBUF;
	gc.done_q[slot] = i;
	gc.done_valid[slot] = valid;
	gc.q_n++;
	atomic_fetch_add(&gc.completed, 1);
	pthread_cond_signal(&gc.cond);
	pthread_mutex_unlock(&gc.lock);
}

static void CUPTIAPI sub_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
				  const void *data)
{
	(void)ud;
	(void)dom;
	(void)cbid;
	/* launch calls, counted at their exit: the activity-independent
	 * witness of gcwatch */
	const CUpti_CallbackData *cb = data;
	if (cb && cb->callbackSite == CUPTI_API_EXIT)
		atomic_fetch_add_explicit(&gc.watch.calls, 1, memory_order_relaxed);
}

/* ---- drain thread ---- */

/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel" (the name users and
 * Kineto know); a copy kept for the process's life, or n itself */
static const char *strip_version(const char *n)
{
	const char *v = strrchr(n, '_');
	if (!v || v[1] != 'v' || !v[2] || strspn(v + 2, "0123456789") != strlen(v + 2))
		return n;
	char *c = strndup(n, (size_t)(v - n));
	return c ? c : n;
}

static const char *api_name(void *ctx, int driver, uint32_t cbid)
{
	(void)ctx;
	if (cbid >= 1024 || !gc.f.GetCallbackName)
		return NULL;
	const char **slot = &gc.api_names[driver][cbid];
	if (!*slot) {
		const char *n = NULL;
		if (gc.f.GetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
					 cbid, &n) == CUPTI_SUCCESS && n)
			*slot = strip_version(n);
	}
	return *slot;
}

static int64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* smallest-bracket pair of (host clock, CUPTI timestamp) */
static void calibrate(struct gt_ring_clock_def *c)
{
	memset(c, 0, sizeof(*c));
	c->bracket_ns = INT64_MAX;
	for (int i = 0; i < 16; i++) {
		uint64_t d;
		int64_t a = realtime_ns();
		if (gc.f.GetTimestamp(&d) != CUPTI_SUCCESS)
			return;
		int64_t b = realtime_ns();
		if (b - a < c->bracket_ns) {
			c->bracket_ns = b - a;
			c->host_ns = a + (b - a) / 2;
			c->dev_ns = (int64_t)d;
		}
	}
	c->offset_ns = c->host_ns - c->dev_ns;
	c->rank = gc.cv.rank;
}

/* at most 95 characters: the ring header's reason */
#define GC_FOREIGN_CLOCK_MSG "another CUPTI client (torch.profiler?) installed its own clock: " \
	"capture stopped"

/* CUPTI's clock against the host's with the applied offset: more than a
 * second apart means another client installed its own clock
 * (cuptiActivityRegisterTimestampCallback, as Kineto does): records from
 * then on are in its units.  Once seen, the capture ends with that line. */
static int clock_replaced(void)
{
	if (gc.foreign_clock)
		return 1;
	uint64_t d;
	if (!gc.cv.clock_set || gc.f.GetTimestamp(&d) != CUPTI_SUCCESS)
		return 0;
	int64_t diff = (int64_t)d + gc.cv.clock_offset_ns - realtime_ns();
	if (diff > -1000000000 && diff < 1000000000)
		return 0;
	gc.foreign_clock = 1;
	gt_agent_end(GC_FOREIGN_CLOCK_MSG);
	return 1;
}

static void drain_buffer(int i, size_t valid, struct gt_publisher *p)
{
	uint8_t *buf = gc.pool + (size_t)i * GC_BUF_BYTES;
	CUpti_Activity *rec = NULL;
	struct gt_publisher_dict d = convert_dict(&gc.cv);
	uint64_t z0 = gc.cv.zero_timestamps, failed = 0;
	CUptiResult r;
	/* after another client's clock: only records still on ours (made
	 * before it) are published, the rest are dropped, never shifted */
	int foreign = clock_replaced();
	int64_t now = realtime_ns();
	while ((r = gc.f.GetNextRecord(buf, valid, &rec)) == CUPTI_SUCCESS) {
		struct gt_event e;
		int cr = convert_record(&gc.cv, rec, &e);
		failed += cr < 0;            /* out of memory: the record is lost, counted */
		if (cr != 1 || !p)
			continue;
		if (foreign && (e.start_ns < now - 3600000000000ll || e.start_ns > now + 3600000000000ll)) {
			atomic_fetch_add(&gc.foreign_records, 1);
			continue;
		}
		gt_publisher_event(p, &e, &d);
	}
	/* INVALID_KIND: an incomplete record (a forced flush met work still
	 * running); the walk cannot go past it */
	if (r != CUPTI_ERROR_MAX_LIMIT_REACHED) {
		atomic_fetch_add(&gc.read_errors, 1);
		if (p)
			gt_agent_count_read_errors(1);
	}
	if (p) {
		const struct gt_ring_device_def *dv;
		size_t n = convert_take_devices(&gc.cv, &dv);
		for (size_t k = 0; k < n; k++)
			gt_publisher_device(p, &dv[k], &d);
		gt_agent_count_loss(0, 0, gc.cv.zero_timestamps - z0);
		gt_agent_count_read_errors(failed);      /* records not converted */
	}
}

#define GC_TAKEN_MSG "another CUPTI client (torch.profiler?) took the activity buffers/kinds: " \
	"capture stopped"
#define GC_FINALIZED_MSG "another CUPTI client (torch.profiler?) finalized CUPTI: capture stopped"

/* once a drain-loop turn: has another client taken CUPTI (gcwatch)?  Then
 * the capture ends with one line, nothing more is published, and the pool
 * buffers CUPTI handed to it are counted (the ring's client_buffers, kept
 * current: one that comes back after all is no longer counted) */
static void watch_client(void)
{
	if (!gc.watching || !gc.enabled)
		return;
	if (atomic_load(&gc.taken)) {
		int64_t o = atomic_load(&gc.outstanding);
		gt_agent_set_client_buffers(o > 0 ? (uint64_t)o : 0);
		return;
	}
	uint32_t on = 0;
	int sub_ok = gc.f.GetCallbackState(&on, gc.sub, CUPTI_CB_DOMAIN_RUNTIME_API,
					   CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) ==
		     CUPTI_SUCCESS && on;
	enum gcwatch_verdict v = gcwatch_check(&gc.watch, realtime_ns(), sub_ok);
	if (v == GCWATCH_OK)
		return;
	atomic_store(&gc.taken, 1);
	gt_agent_end(v == GCWATCH_FINALIZED ? GC_FINALIZED_MSG : GC_TAKEN_MSG);
	int64_t o = atomic_load(&gc.outstanding);
	gt_agent_set_client_buffers(o > 0 ? (uint64_t)o : 0);
}

/* CUPTI's dropped records (global queue; the count resets on read) and
 * the buffer requests we declined, into the ring's loss counters */
static void count_losses(void)
{
	size_t dropped = 0;
	if (gc.f.GetNumDroppedRecords(NULL, 0, &dropped) != CUPTI_SUCCESS)
		dropped = 0;
	uint64_t declined = atomic_exchange(&gc.declined, 0);
	if (dropped || declined)
		gt_agent_count_loss(dropped, declined, 0);
}

/* who this process is: pid, RANK, LOCAL_RANK, WORLD_SIZE (-1 unknown),
 * host name */
static void publish_identity(struct gt_publisher *p, const struct gt_publisher_dict *d)
{
	struct gt_ring_rank_def rd;
	memset(&rd, 0, sizeof(rd));
	rd.pid = gc.cv.pid;
	rd.rank = gc.cv.rank;
	const char *ws = getenv("WORLD_SIZE");
	rd.world_size = ws && *ws ? atoi(ws) : -1;
	const char *lr = getenv("LOCAL_RANK");
	rd.local_rank1 = lr && *lr && atoi(lr) >= 0 ? atoi(lr) + 1 : 0;
	char host[256] = "";
	const char *hv = getenv("GTRACE_HOSTNAME");   /* as gt_job_hostname: a chosen name */
	if (hv && *hv)
		snprintf(host, sizeof(host), "%s", hv);
	if ((host[0] || gethostname(host, sizeof(host) - 1) == 0) && host[0])
		rd.host = convert_intern(&gc.cv, host, strlen(host));
	gt_publisher_rank(p, &rd, d);
}

static void *drain_main(void *arg)
{
	(void)arg;
	uint64_t last_reset = 0;
	int64_t last_cal = 0;
	for (;;) {
		pthread_mutex_lock(&gc.lock);
		if (gc.q_n == 0) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&gc.cond, &gc.lock, &ts);
		}
		if (gc.drain_stop && gc.q_n == 0) {
			pthread_mutex_unlock(&gc.lock);
			return NULL;
		}
		int i = -1;
		size_t valid = 0;
		if (gc.q_n) {
			i = gc.done_q[gc.q_head];
			valid = gc.done_valid[gc.q_head];
			gc.q_head = (gc.q_head + 1) % GC_NBUF;
			gc.q_n--;
		}
		pthread_mutex_unlock(&gc.lock);
		struct gt_publisher *p = gt_agent_pub();
		if (p)
			watch_client();
		if (p && p->resets != last_reset) {
			/* a new viewer: devices and a fresh calibration first */
			last_reset = p->resets;
			struct gt_publisher_dict d = convert_dict(&gc.cv);
			publish_identity(p, &d);
			for (size_t k = 0; k < gc.cv.n_dev; k++)
				gt_publisher_device(p, &gc.cv.dev[k], &d);
			last_cal = 0;
		}
		int64_t now = realtime_ns();
		if (p && now - last_cal > 1000000000 && !clock_replaced()) {
			struct gt_ring_clock_def c;
			calibrate(&c);
			if (convert_clock(&gc.cv, &c) == 0)
				gt_publisher_clock(p, &c);
			last_cal = now;
			count_losses();
		}
		if (i >= 0) {
			drain_buffer(i, valid, p);
			/* CUPTI's drop count and our declines as of this buffer,
			 * so the last buffers of a capture (stop, exit) count too */
			if (p)
				count_losses();
			pthread_mutex_lock(&gc.lock);
			gc.free_stack[gc.n_free++] = i;
			pthread_mutex_unlock(&gc.lock);
			atomic_fetch_add(&gc.drained, 1);
		}
	}
	return NULL;
}

/* at exit: hand CUPTI's last buffers to the drain thread and let it
 * publish them (bounded wait), so a recording of a finished run is whole */
/* flush CUPTI (complete records first, then the rest) and wait at most
 * max_ms for the drain thread to publish every buffer handed to it */
static void flush_and_wait(int max_ms)
{
	/* buffers CUPTI still holds hold work still running: a forced flush
	 * now would hand them back with incomplete records, where the record
	 * walk stops (everything after them lost).  Flush completed buffers
	 * until CUPTI holds none of ours, for at most half of max_ms. */
	gc.f.FlushAll(0);
	/* buffers another client holds never come back: no wait for them */
	for (int t = 0; t < max_ms / 10 && atomic_load(&gc.outstanding) > 0 && !atomic_load(&gc.taken);
	     t++) {
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
		gc.f.FlushAll(0);
	}
	gc.f.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	for (int t = 0; t < max_ms / 5 && atomic_load(&gc.drained) < atomic_load(&gc.completed); t++) {
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
	}
}

/* in a fork()ed child (a DataLoader worker): no drain thread, no CUPTI of
 * its own, locks maybe held by threads that do not exist here; nothing
 * is flushed or waited for (no lock is taken at fork either) */
static void gc_forked(void)
{
	gc.forked = 1;
}

static void gc_atexit(void)
{
	if (gc.forked)
		return;
	if (gc.enabled)
		flush_and_wait(2000);
	/* a short-lived process: the viewer that started it may not have
	 * taken the capture yet */
	gt_agent_exit_wait(2000);
	/* the drain thread ends here, before libcupti's destructor runs: a
	 * call into CUPTI after it (a calibration, a drop count) is undefined.
	 * It never blocks but on its queue; bounded anyway. */
	if (gc.drain_started) {
		pthread_mutex_lock(&gc.lock);
		gc.drain_stop = 1;
		pthread_cond_signal(&gc.cond);
		pthread_mutex_unlock(&gc.lock);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 2;
		if (pthread_timedjoin_np(gc.drain, NULL, &ts) == 0)
			gc.drain_started = 0;
	}
	/* the viewer learns of the exit from its control socket closing */
}

/* ---- agent source operations (control thread) ---- */

static void gc_disable(void *ctx);

/* our launch calls through the callback API (not part of CUPTI's activity
 * state, which another client can take) for gcwatch; GTRACE_CLIENT_WATCH_MS
 * sets its silence window (default 3 s) */
static void watch_start(void)
{
	static const CUpti_CallbackId rt[] = {
		CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
		CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
		CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
		CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
		CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
		CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
		CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
	};
	static const CUpti_CallbackId dr[] = {
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
	};
	const char *e = getenv("GTRACE_CLIENT_WATCH_MS");
	gcwatch_init(&gc.watch, e ? (int64_t)atol(e) * 1000000 : 0);
	gc.watching = 0;
	if (!gc.f.EnableCallback || !gc.f.GetCallbackState)
		return;
	int ok = gc.f.EnableCallback(1, gc.sub, CUPTI_CB_DOMAIN_RUNTIME_API, rt[0]) == CUPTI_SUCCESS;
	for (size_t k = 1; ok && k < sizeof(rt) / sizeof(rt[0]); k++)
		gc.f.EnableCallback(1, gc.sub, CUPTI_CB_DOMAIN_RUNTIME_API, rt[k]);
	for (size_t k = 0; ok && k < sizeof(dr) / sizeof(dr[0]); k++)
		gc.f.EnableCallback(1, gc.sub, CUPTI_CB_DOMAIN_DRIVER_API, dr[k]);
	gc.watching = ok;
}

static int gc_enable(void *ctx, char *err, size_t errlen)
{
	(void)ctx;
	if (gc.forked) {
		snprintf(err, errlen, "a fork()ed child of the traced process does not capture");
		return -EPERM;
	}
	char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 64] = "";
	CUptiResult r;
	if (gc.f.Subscribe_v2) {
		/* the _v2 call names the profiler already holding CUPTI */
		CUpti_SubscriberParams sp;
		memset(&sp, 0, sizeof(sp));
		sp.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
		sp.subscriberName = "gtrace";
		sp.oldSubscriberName = holder;
		sp.oldSubscriberSize = sizeof(holder);
		r = gc.f.Subscribe_v2(&gc.sub, (CUpti_CallbackFunc)sub_callback, NULL, &sp);
	} else {
		r = gc.f.Subscribe(&gc.sub, (CUpti_CallbackFunc)sub_callback, NULL);
	}
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		holder[sizeof(holder) - 1] = 0;
		snprintf(err, errlen, "CUPTI is in use by another profiler in this process (%s); "
			 "gtrace stays out of its way",
			 holder[0] ? holder : "PyTorch profiler, Nsight or compute-sanitizer");
		return -EBUSY;
	}
	if (r != CUPTI_SUCCESS) {
		snprintf(err, errlen, "cuptiSubscribe: %s", res_str(r));
		return -EIO;
	}
	gc.subscribed = 1;
	int rc = 0;
	if (!gc.pool) {
		/* GTRACE_CUPTI_BUFFERS: a smaller pool (2..32 buffers of 4 MiB) */
		const char *nb = getenv("GTRACE_CUPTI_BUFFERS");
		gc.nbuf = nb ? atoi(nb) : GC_NBUF;
		gc.nbuf = gc.nbuf < 2 ? 2 : gc.nbuf > GC_NBUF ? GC_NBUF : gc.nbuf;
		gc.pool = aligned_alloc(8, (size_t)gc.nbuf * GC_BUF_BYTES);
		if (!gc.pool) {
			snprintf(err, errlen, "cannot allocate %u MiB of activity buffers",
				 gc.nbuf * (GC_BUF_BYTES >> 20));
			rc = -ENOMEM;
			goto fail;
		}
		for (int i = 0; i < gc.nbuf; i++)
			gc.free_stack[gc.n_free++] = i;
	}
	/* on every start: another CUPTI client (a profiler that held the
	 * subscription while we were dormant) may have registered its own */
	r = gc.f.RegisterCallbacks(buf_requested, buf_completed);
	if (r != CUPTI_SUCCESS) {
		snprintf(err, errlen, "cuptiActivityRegisterCallbacks: %s", res_str(r));
		rc = -EIO;
		goto fail;
	}
	gc.registered = 1;
	/* buffers are served from now on (the pool exists); what CUPTI dropped while we were
	 * dormant (kernels of a prepared process) is not this capture's loss */
	atomic_store(&gc.accept, 1);
	if (gc.prepared) {
		size_t dropped;
		gc.f.GetNumDroppedRecords(NULL, 0, &dropped);
		atomic_store(&gc.declined, 0);
	}
	/* system thread ids (gettid), so host lanes match the OS's and
	 * Kineto's tids; CUPTI's default is pthread_self() */
	if (gc.f.SetThreadIdType)
		gc.f.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	if (!gc.drain_started) {
		convert_init(&gc.cv, getpid(), getenv("RANK") ? atoi(getenv("RANK")) : -1);
		gc.cv.api_name = api_name;
		gc.cv.cupti_major = gc.major;
		if (pthread_create(&gc.drain, NULL, drain_main, NULL) != 0) {
			snprintf(err, errlen, "cannot start the drain thread");
			rc = -EAGAIN;
			goto fail;
		}
		gc.drain_started = 1;
	}
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
		CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
		CUPTI_ACTIVITY_KIND_MARKER, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
		CUPTI_ACTIVITY_KIND_OVERHEAD, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
		CUPTI_ACTIVITY_KIND_MEMORY2,    /* allocations and frees (memory-usage) */
	};
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		r = gc.f.Enable(kinds[k]);
		if (r != CUPTI_SUCCESS && k < 4) {
			snprintf(err, errlen, "cuptiActivityEnable(%d): %s", (int)kinds[k], res_str(r));
			rc = -EIO;
			goto fail;
		}
	}
	/* device and context tables now, for a late attach */
	if (gc.f.EnableAndDump) {
		gc.f.EnableAndDump(CUPTI_ACTIVITY_KIND_DEVICE);
		gc.f.EnableAndDump(CUPTI_ACTIVITY_KIND_CONTEXT);
	}
	/* chatty calls that would flood the ring (convert.h: the records
	 * of those made until now are dropped by the converter) */
	if (gc.f.EnableRuntimeApi)
		for (size_t k = 0; k < convert_chatty_rt_n; k++)
			gc.f.EnableRuntimeApi(convert_chatty_rt[k], 0);
	if (gc.f.EnableDriverApi)
		for (size_t k = 0; k < convert_chatty_drv_n; k++)
			gc.f.EnableDriverApi(convert_chatty_drv[k], 0);
	if (gc.f.FlushPeriod)
		gc.f.FlushPeriod(100);
	watch_start();
	static int atexit_done;
	if (!atexit_done && atexit(gc_atexit) == 0)
		atexit_done = 1;
	gc.enabled = 1;
	return 0;
fail:
	/* leave CUPTI as we found it: no kinds on, subscription given back,
	 * so another profiler can still take it */
	gc_disable(NULL);
	return rc;
}

static void gc_disable(void *ctx)
{
	(void)ctx;
	if (gc.forked)
		return;
	gc.enabled = 0;
	if (atomic_load(&gc.taken)) {
		/* the kinds and callbacks are the other client's now: leave
		 * them (a prepared process's kernel tracing included: it is
		 * that client's to keep or end); no buffer is served any more,
		 * only our subscription goes */
		atomic_store(&gc.accept, 0);
		if (gc.subscribed)
			gc.f.Unsubscribe(gc.sub);
		gc.subscribed = 0;
		return;
	}
	/* API records off before GPU work, the reverse of the start: at either
	 * edge of a capture a launch may lose its GPU record's partner, never
	 * the other way round, so a launch without kernels means what
	 * live_graphs_untraced says (a graph that could not be traced) */
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
		CUPTI_ACTIVITY_KIND_MARKER, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
		CUPTI_ACTIVITY_KIND_OVERHEAD, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
		CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT, CUPTI_ACTIVITY_KIND_MEMORY2,
	};
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		gc.f.Disable(kinds[k]);
	/* the last records reach the ring before the agent retires it (the
	 * viewer reads them after the "stop" reply) */
	flush_and_wait(2000);
	atomic_store(&gc.accept, 0);
	if (gc.prepared)
		gc.f.Enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);   /* dormant again: see gcupti_prepare */
	if (gc.subscribed)
		gc.f.Unsubscribe(gc.sub);
	gc.subscribed = 0;
}

int gcupti_prepare(void)
{
	const char *e = getenv("GTRACE_PREPARE_GRAPHS");
	if (gc.prepared || gc.forked || (e && !strcmp(e, "0")))
		return 0;
	/* our callbacks decline every buffer while dormant (gc.accept 0):
	 * CUPTI drops the records, no memory is used */
	if (gc.f.RegisterCallbacks(buf_requested, buf_completed) != CUPTI_SUCCESS ||
	    gc.f.Enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS)
		return -EIO;
	gc.prepared = 1;
	return 0;
}

static void gc_flush(void *ctx)
{
	(void)ctx;
	if (gc.forked)
		return;
	gc.f.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

static void gc_status(void *ctx, char *buf, size_t len)
{
	(void)ctx;
	int64_t o = atomic_load(&gc.outstanding);
	snprintf(buf, len, " gpus=%zu read_errors=%llu foreign_clock_records=%llu"
		 " client_taken=%d client_buffers_lost=%llu foreign_buffers=%llu", gc.cv.n_dev,
		 (unsigned long long)atomic_load(&gc.read_errors),
		 (unsigned long long)atomic_load(&gc.foreign_records), atomic_load(&gc.taken),
		 (unsigned long long)(atomic_load(&gc.taken) && o > 0 ? o : 0),
		 (unsigned long long)atomic_load(&gc.foreign_buffers));
}

static const struct gt_agent_source gc_source = {
	.name = "cupti", .enable = gc_enable, .disable = gc_disable,
	.flush = gc_flush, .status = gc_status,
};

const struct gt_agent_source *gcupti_source(void)
{
	return &gc_source;
}
