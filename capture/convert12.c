/*
 * convert12.c - CUDA 12 CUPTI records -> CUDA 13 records
 * (capture/convert12.h).  Each lift copies field by field by name, so a
 * layout difference between the versions is the compiler's business, not
 * an offset assumption.
 */
#include <string.h>
#include "convert12.h"

static void kernel(const CUpti_ActivityKernel9 *k, CUpti_ActivityKernel10 *o)
{
	o->kind = k->kind;
	o->start = k->start;
	o->end = k->end;
	o->completed = k->completed;
	o->deviceId = k->deviceId;
	o->contextId = k->contextId;
	o->streamId = k->streamId;
	o->gridX = k->gridX;
	o->gridY = k->gridY;
	o->gridZ = k->gridZ;
	o->blockX = k->blockX;
	o->blockY = k->blockY;
	o->blockZ = k->blockZ;
	o->registersPerThread = k->registersPerThread;
	o->staticSharedMemory = k->staticSharedMemory;
	o->dynamicSharedMemory = k->dynamicSharedMemory;
	o->correlationId = k->correlationId;
	o->gridId = k->gridId;
	o->name = k->name;
	o->queued = k->queued;
	o->submitted = k->submitted;
	o->launchType = k->launchType;
	o->graphNodeId = k->graphNodeId;
	o->graphId = k->graphId;
}

static void memcpy5(const CUpti_ActivityMemcpy5 *m, CUpti_ActivityMemcpy6 *o)
{
	o->kind = m->kind;
	o->copyKind = m->copyKind;
	o->srcKind = m->srcKind;
	o->dstKind = m->dstKind;
	o->flags = m->flags;
	o->bytes = m->bytes;
	o->start = m->start;
	o->end = m->end;
	o->deviceId = m->deviceId;
	o->contextId = m->contextId;
	o->streamId = m->streamId;
	o->correlationId = m->correlationId;
	o->runtimeCorrelationId = m->runtimeCorrelationId;
	o->graphNodeId = m->graphNodeId;
	o->graphId = m->graphId;
}

static void p2p(const CUpti_ActivityMemcpyPtoP3 *m, CUpti_ActivityMemcpyPtoP4 *o)
{
	o->kind = m->kind;
	o->copyKind = m->copyKind;
	o->srcKind = m->srcKind;
	o->dstKind = m->dstKind;
	o->flags = m->flags;
	o->bytes = m->bytes;
	o->start = m->start;
	o->end = m->end;
	o->deviceId = m->deviceId;
	o->contextId = m->contextId;
	o->streamId = m->streamId;
	o->srcDeviceId = m->srcDeviceId;
	o->srcContextId = m->srcContextId;
	o->dstDeviceId = m->dstDeviceId;
	o->dstContextId = m->dstContextId;
	o->correlationId = m->correlationId;
	o->graphNodeId = m->graphNodeId;
	o->graphId = m->graphId;
}

static void device(const CUpti_ActivityDevice4 *d, CUpti_ActivityDevice5 *o)
{
	o->kind = d->kind;
	o->id = d->id;
	o->name = d->name;
	o->numMultiprocessors = d->numMultiprocessors;
	o->globalMemorySize = d->globalMemorySize;
	o->computeCapabilityMajor = d->computeCapabilityMajor;
	o->computeCapabilityMinor = d->computeCapabilityMinor;
}

static void context(const CUpti_ActivityContext2 *x, CUpti_ActivityContext3 *o)
{
	o->kind = x->kind;
	o->contextId = x->contextId;
	o->deviceId = x->deviceId;
	o->computeApiKind = x->computeApiKind;
	o->nullStreamId = x->nullStreamId;
}

static void sync1(const CUpti_ActivitySynchronization *s, CUpti_ActivitySynchronization2 *o)
{
	o->kind = s->kind;
	o->type = s->type;
	o->start = s->start;
	o->end = s->end;
	o->correlationId = s->correlationId;
	o->contextId = s->contextId;
	o->streamId = s->streamId;
	o->cudaEventId = s->cudaEventId;
}

static void overhead(const CUpti_ActivityOverhead2 *v, CUpti_ActivityOverhead3 *o)
{
	o->kind = v->kind;
	o->overheadKind = v->overheadKind;
	o->objectKind = v->objectKind;
	o->objectId = v->objectId;
	o->start = v->start;
	o->end = v->end;
	o->correlationId = v->correlationId;
}

const void *convert12_up(const void *rec, union convert12_rec *tmp)
{
	const CUpti_Activity *r = rec;
	memset(tmp, 0, sizeof(*tmp));
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		kernel(rec, &tmp->kernel);
		return tmp;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		memcpy5(rec, &tmp->memcpy);
		return tmp;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		p2p(rec, &tmp->p2p);
		return tmp;
	case CUPTI_ACTIVITY_KIND_DEVICE:
		device(rec, &tmp->device);
		return tmp;
	case CUPTI_ACTIVITY_KIND_CONTEXT:
		context(rec, &tmp->context);
		return tmp;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		sync1(rec, &tmp->sync);
		return tmp;
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		overhead(rec, &tmp->overhead);
		return tmp;
	default:
		return rec;          /* API, Marker2, Memset4, ExternalCorrelation, ... */
	}
}
