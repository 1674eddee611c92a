/*
 * cudaemu_pooldump.c - a minimal CUPTI client for the emulator's tests
 * (test_cudaemu_pool.c): an injection library (CUDA_INJECTION64_PATH) that
 * enables CUPTI_ACTIVITY_KIND_MEMORY_POOL and MEMORY2 and writes every such
 * record, read through the CUDA 13 header's structs, as a text line to the
 * file CUDAEMU_POOLDUMP names, flushing CUPTI at exit:
 *
 *   R op type device ts address size releaseThreshold utilized minBytesToKeep corr pid
 *       (CUpti_ActivityMemoryPool3)
 *   M op device ts bytes poolType poolAddress poolSize releaseThreshold utilized corr isAsync
 *       (CUpti_ActivityMemory4 and its memoryPoolConfig)
 *
 * It stands in for a capture so that the emulator's records can be checked
 * field by field against the trainer's truth without gtrace's converter.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <cupti.h>

#define BUF_SIZE (64u << 10)

static FILE *dump;
static pthread_mutex_t dump_lock = PTHREAD_MUTEX_INITIALIZER;

static void CUPTIAPI buf_request(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = aligned_alloc(8, BUF_SIZE);
	*size = *buf ? BUF_SIZE : 0;
	*max_records = 0;
}

/* one record as its line (dump_lock held) */
static void put(const CUpti_Activity *r)
{
	if (r->kind == CUPTI_ACTIVITY_KIND_MEMORY_POOL) {
		const CUpti_ActivityMemoryPool3 *p = (const void *)r;
		fprintf(dump, "R\t%d\t%d\t%u\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%u\t%u\n",
			(int)p->memoryPoolOperationType, (int)p->memoryPoolType, p->deviceId,
			(unsigned long long)p->timestamp, (unsigned long long)p->address,
			(unsigned long long)p->size, (unsigned long long)p->releaseThreshold,
			(unsigned long long)p->utilizedSize, (unsigned long long)p->minBytesToKeep,
			p->correlationId, p->processId);
	} else if (r->kind == CUPTI_ACTIVITY_KIND_MEMORY2) {
		const CUpti_ActivityMemory4 *m = (const void *)r;
		fprintf(dump, "M\t%d\t%u\t%llu\t%llu\t%d\t%llu\t%llu\t%llu\t%llu\t%u\t%u\n",
			(int)m->memoryOperationType, m->deviceId, (unsigned long long)m->timestamp,
			(unsigned long long)m->bytes, (int)m->memoryPoolConfig.memoryPoolType,
			(unsigned long long)m->memoryPoolConfig.address,
			(unsigned long long)m->memoryPoolConfig.pool.size,
			(unsigned long long)m->memoryPoolConfig.releaseThreshold,
			(unsigned long long)m->memoryPoolConfig.utilizedSize, m->correlationId,
			m->isAsync);
	}
}

static void CUPTIAPI buf_complete(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
				  size_t valid)
{
	(void)ctx;
	(void)stream;
	(void)size;
	CUpti_Activity *r = NULL;
	pthread_mutex_lock(&dump_lock);
	while (dump && cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
		put(r);
	pthread_mutex_unlock(&dump_lock);
	free(buf);
}

static void at_exit(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&dump_lock);
	if (dump)
		fclose(dump);
	dump = NULL;
	pthread_mutex_unlock(&dump_lock);
}

int InitializeInjection(void) __attribute__((visibility("default")));

/* the driver's injection entry: 1 when the dump file opened and CUPTI took
 * the callbacks and both kinds */
int InitializeInjection(void)
{
	const char *path = getenv("CUDAEMU_POOLDUMP");
	dump = path ? fopen(path, "w") : NULL;
	if (!dump)
		return 0;
	if (cuptiActivityRegisterCallbacks(buf_request, buf_complete) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY_POOL) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2) != CUPTI_SUCCESS)
		return 0;
	atexit(at_exit);
	return 1;
}
