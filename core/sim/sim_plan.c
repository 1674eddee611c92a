/*
 * sim_plan.c - the work items of one training step of the simulated model.
 *
 * The model is a small vision transformer: a convolution stem (cuDNN), L
 * transformer blocks (cuBLAS/CUTLASS GEMMs, softmax, layer norm,
 * elementwise), a classifier head with a cross-entropy loss, the backward
 * pass in reverse, DDP AllReduce buckets and a fused AdamW step.  Kernel
 * names, launch configurations and durations are those of an H100 run of
 * such a model (durations rounded).  Scenarios change the plan: see
 * docs/simulator.md for what each plants.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sim_priv.h"

struct kspec {
	const char *op;
	const char *name;
	uint16_t gx, gy, bx, regs;
	uint32_t smem_s, smem_d;
	float occ;
	uint16_t dur_us;
};

#define GEMM_TN "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas"
#define GEMM_NN "sm90_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas"
#define GEMM_NT "sm90_xmma_gemm_f16f16_f16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
#define GEMM_SM "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize64x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
#define CUTLASS_TNN "cutlass3x_sm90_tensorop_gemm_f16_f16_f32_f16_f16_128x128x64_1x1x1_0_tnn_align8_warpspecialized_cooperative_epi_tma"
#define CUTLASS_NNN "cutlass3x_sm90_tensorop_gemm_f16_f16_f32_f16_f16_128x128x64_1x1x1_0_nnn_align8_warpspecialized_cooperative_epi_tma"
#define CUTLASS_NTN "cutlass3x_sm90_tensorop_gemm_f16_f16_f32_f16_f16_128x256x64_2x1x1_0_ntn_align8_warpspecialized_pingpong_epi_tma"
#define EW_ADD "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::Half>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::Half>, at::detail::Array<char*, 3>)"
#define EW_GELU "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::Half)#1}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::Half)#1}, at::detail::Array<char*, 2>)"
#define EW_GELU_BW "void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::Half, c10::Half)#1}, at::detail::Array<char*, 3> >(int, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::Half, c10::Half)#1}, at::detail::Array<char*, 3>)"
#define LN_FW "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::Half, float>(int, float, c10::Half const*, c10::Half const*, c10::Half const*, float*, float*, c10::Half*)"
#define LN_BW "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<c10::Half, float>(c10::Half const*, c10::Half const*, float const*, float const*, c10::Half const*, c10::Half*, int)"
#define LN_GB "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<c10::Half, float>(long, long, c10::Half const*, c10::Half const*, float const*, float const*, c10::Half*, c10::Half*)"
#define SM_FW "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::Half, float, c10::Half, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::Half*, c10::Half const*, int)"
#define SM_BW "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<8, c10::Half, float, c10::Half, at::native::(anonymous namespace)::SoftMaxBackwardEpilogue>(c10::Half*, c10::Half const*, c10::Half const*, int)"

static const struct kspec block_fw[] = {
	{ "aten::native_layer_norm", LN_FW, 4096, 1, 256, 32, 0, 0, 87.5f, 30 },
	{ "aten::addmm", GEMM_TN, 18, 16, 384, 168, 0, 218112, 12.5f, 190 },
	{ "aten::bmm", CUTLASS_TNN, 132, 1, 384, 168, 0, 197632, 12.5f, 95 },
	{ "aten::_softmax", SM_FW, 8192, 1, 512, 40, 0, 2048, 75.0f, 70 },
	{ "aten::bmm", CUTLASS_NNN, 132, 1, 384, 168, 0, 197632, 12.5f, 90 },
	{ "aten::addmm", GEMM_NT, 24, 8, 256, 154, 0, 164864, 12.5f, 120 },
	{ "aten::add", EW_ADD, 6144, 1, 128, 28, 0, 0, 81.2f, 28 },
	{ "aten::native_layer_norm", LN_FW, 4096, 1, 256, 32, 0, 0, 87.5f, 30 },
	{ "aten::addmm", GEMM_TN, 24, 24, 384, 168, 0, 218112, 12.5f, 330 },
	{ "aten::gelu", EW_GELU, 8192, 1, 128, 26, 0, 0, 85.1f, 75 },
	{ "aten::addmm", GEMM_TN, 18, 16, 384, 168, 0, 218112, 12.5f, 310 },
	{ "aten::add", EW_ADD, 6144, 1, 128, 28, 0, 0, 81.2f, 28 },
};

static const struct kspec block_bw[] = {
	{ "aten::mm", GEMM_NN, 18, 16, 384, 168, 0, 218112, 12.5f, 300 },
	{ "aten::mm", GEMM_NT, 24, 24, 256, 154, 0, 164864, 12.5f, 320 },
	{ "aten::gelu_backward", EW_GELU_BW, 8192, 1, 128, 30, 0, 0, 80.4f, 95 },
	{ "aten::mm", GEMM_NN, 24, 24, 384, 168, 0, 218112, 12.5f, 330 },
	{ "aten::mm", GEMM_NT, 24, 24, 256, 154, 0, 164864, 12.5f, 340 },
	{ "aten::native_layer_norm_backward", LN_BW, 4096, 1, 256, 40, 0, 0, 62.5f, 45 },
	{ "aten::native_layer_norm_backward", LN_GB, 32, 1, 1024, 64, 8192, 0, 25.0f, 40 },
	{ "aten::add", EW_ADD, 6144, 1, 128, 28, 0, 0, 81.2f, 28 },
	{ "aten::mm", CUTLASS_NTN, 132, 1, 384, 168, 0, 213504, 12.5f, 120 },
	{ "aten::mm", GEMM_NT, 24, 8, 256, 154, 0, 164864, 12.5f, 125 },
	{ "aten::bmm", CUTLASS_NNN, 132, 1, 384, 168, 0, 197632, 12.5f, 90 },
	{ "aten::bmm", CUTLASS_TNN, 132, 1, 384, 168, 0, 197632, 12.5f, 90 },
	{ "aten::_softmax_backward_data", SM_BW, 8192, 1, 512, 48, 0, 2048, 62.5f, 80 },
	{ "aten::bmm", CUTLASS_NNN, 132, 1, 384, 168, 0, 197632, 12.5f, 95 },
	{ "aten::bmm", CUTLASS_TNN, 132, 1, 384, 168, 0, 197632, 12.5f, 95 },
	{ "aten::mm", GEMM_NN, 18, 16, 384, 168, 0, 218112, 12.5f, 190 },
	{ "aten::mm", GEMM_NT, 18, 16, 256, 154, 0, 164864, 12.5f, 200 },
	{ "aten::native_layer_norm_backward", LN_BW, 4096, 1, 256, 40, 0, 0, 62.5f, 45 },
	{ "aten::native_layer_norm_backward", LN_GB, 32, 1, 1024, 64, 8192, 0, 25.0f, 40 },
	{ "aten::add", EW_ADD, 6144, 1, 128, 28, 0, 0, 81.2f, 28 },
};

static const struct kspec stem_fw[] = {
	{ "aten::cudnn_convolution", "sm86_xmma_fprop_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4_warpsize2x2x1_g1_tensor16x8x16_kernel", 784, 1, 128, 232, 0, 81920, 12.5f, 260 },
	{ "aten::cudnn_batch_norm", "void cudnn::bn_fw_tr_1C11_kernel_NCHW<__half, float, 512, true, 1>(cudnnTensorStruct, __half const*, cudnnTensorStruct, __half*, float const*, float const*, float, float, float*, float*, float*, float*, float, float)", 64, 32, 512, 38, 4096, 0, 50.0f, 110 },
	{ "aten::relu_", "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#14}::operator()() const::{lambda(c10::Half)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#14}::operator()() const::{lambda(c10::Half)#1}, at::detail::Array<char*, 2>)", 8192, 1, 128, 24, 0, 0, 87.0f, 45 },
};

static const struct kspec stem_bw[] = {
	{ "aten::threshold_backward", "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::threshold_kernel_impl<c10::Half>(at::TensorIteratorBase&, c10::Half, c10::Half)::{lambda(c10::Half, c10::Half)#1}, at::detail::Array<char*, 3> >(int, at::native::(anonymous namespace)::threshold_kernel_impl<c10::Half>(at::TensorIteratorBase&, c10::Half, c10::Half)::{lambda(c10::Half, c10::Half)#1}, at::detail::Array<char*, 3>)", 8192, 1, 128, 26, 0, 0, 84.0f, 60 },
	{ "aten::cudnn_batch_norm_backward", "void cudnn::bn_bw_1C11_kernel_new<__half, float, float2, 512, true, 1>(__half, __half, __half, __half, cudnnTensorStruct, __half const*, cudnnTensorStruct, __half const*, cudnnTensorStruct, __half*, float const*, float*, float*, float const*, float const*, float)", 64, 32, 512, 48, 8192, 0, 50.0f, 150 },
	{ "aten::convolution_backward", "sm86_xmma_wgrad_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4_warpsize2x2x1_g1_tensor16x8x16_kernel", 392, 1, 128, 232, 0, 81920, 12.5f, 280 },
};

static const struct kspec head_fw[] = {
	{ "aten::addmm", GEMM_SM, 8, 16, 128, 128, 0, 98304, 25.0f, 85 },
	{ "aten::_log_softmax", "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)", 256, 1, 1024, 32, 0, 4096, 50.0f, 35 },
	{ "aten::nll_loss_forward", "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, float*, float const*, long const*, float const*, bool, long, long, long, long)", 1, 1, 32, 24, 0, 0, 1.6f, 12 },
};

static const struct kspec head_bw[] = {
	{ "aten::nll_loss_backward", "void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<float, long>(float*, float const*, long const*, float const*, float const*, bool, int, int, long, long)", 1, 1, 32, 26, 0, 0, 1.6f, 10 },
	{ "aten::_log_softmax_backward_data", "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(float*, float const*, float const*, int)", 256, 1, 1024, 36, 0, 4096, 50.0f, 30 },
	{ "aten::mm", GEMM_NN, 8, 16, 128, 128, 0, 98304, 25.0f, 85 },
	{ "aten::mm", GEMM_NT, 8, 16, 128, 128, 0, 98304, 25.0f, 80 },
};

static const struct kspec optim[] = {
	{ "aten::_foreach_norm", "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::LpNormFunctor<float, 2, float, float>, float*, int>(at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::LpNormFunctor<float, 2, float, float>, float*, int)", 320, 1, 512, 32, 0, 0, 75.0f, 140 },
	{ "aten::_foreach_norm", "void at::native::(anonymous namespace)::lpnorm_cleanup<float, 2, float, float>(float const*, at::native::(anonymous namespace)::TensorListAddresses, int)", 64, 1, 512, 30, 2048, 0, 10.0f, 8 },
	{ "aten::_foreach_mul_", "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarTensorFunctor<float, 1, 1, 0>, std::multiplies<float>, float*>(at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarTensorFunctor<float, 1, 1, 0>, std::multiplies<float>, float*)", 320, 1, 512, 28, 0, 0, 80.0f, 120 },
	{ "aten::_fused_adamw_", "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, double*, double*>(at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, double*, double*)", 320, 1, 512, 72, 0, 0, 43.7f, 380 },
	{ "aten::_fused_adamw_", "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, double*, double*>(at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, double*, double*)", 320, 1, 512, 72, 0, 0, 43.7f, 380 },
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* per-launch host costs, ns */
#define API_LAUNCH_NS 5000
#define API_COPY_NS 8000
#define API_NCCL_NS 10000
#define PRE_NS 2000
#define LB_API_NS 12000   /* launch-bound: slow launches (Python overhead) */
#define LB_PRE_NS 4000
#define HOST_ITEM_NS 9500 /* pre + launch + post + gap, per item (estimate) */

struct pb {
	struct gt_sim *sim;
	struct sim_plan *p;
	unsigned dep_next;   /* deps for the next compute item */
	int lb;              /* launch-bound */
	int err;
	struct sim_rng rng;  /* launch-bound kernel durations */
};

static struct sim_item *pb_add(struct pb *b)
{
	struct sim_plan *p = b->p;
	if (p->n == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 256;
		struct sim_item *ni = realloc(p->it, nc * sizeof(*ni));
		if (!ni) {
			b->err = -ENOMEM;
			return NULL;
		}
		p->it = ni;
		p->cap = nc;
	}
	struct sim_item *it = &p->it[p->n++];
	memset(it, 0, sizeof(*it));
	it->api_ns = b->lb ? LB_API_NS : API_LAUNCH_NS;
	it->pre_ns = b->lb ? LB_PRE_NS : PRE_NS;
	return it;
}

static void pb_kernels(struct pb *b, const struct kspec *k, size_t n)
{
	struct gt_store *s = b->sim->st;
	for (size_t i = 0; i < n; i++) {
		struct sim_item *it = pb_add(b);
		if (!it)
			return;
		struct gt_kconf kc = { { k[i].gx, k[i].gy, 1 }, { k[i].bx, 1, 1 }, k[i].regs,
				       k[i].smem_s, k[i].smem_d, k[i].occ };
		it->kind = GT_EV_KERNEL;
		it->stream = SIM_ST_COMPUTE;
		it->deps = (uint8_t)b->dep_next;
		b->dep_next = 0;
		it->flags = SIM_IT_STRAGGLE;
		it->name = gt_store_intern_cstr(s, k[i].name);
		it->op = gt_store_intern_cstr(s, k[i].op);
		it->api = gt_store_intern_cstr(s, "cudaLaunchKernel");
		it->arg = gt_store_kconf(s, &kc);
		if (b->lb) {
			/* 2-6 us per kernel, fixed per plan position */
			it->dur_ns = 2000 + (int64_t)(sim_rng_unit(&b->rng) * 4000.0);
		} else {
			it->dur_ns = (int64_t)k[i].dur_us * 1000;
		}
		b->p->kernels++;
	}
}

static void pb_copy(struct pb *b, int sub, uint64_t bytes, int64_t dur_ns, unsigned deps,
		    uint16_t evflags)
{
	struct gt_store *s = b->sim->st;
	struct sim_item *it = pb_add(b);
	if (!it)
		return;
	static const char *const names[] = {
		[GT_COPY_H2D] = "Memcpy HtoD (Pinned -> Device)",
		[GT_COPY_D2H] = "Memcpy DtoH (Device -> Pinned)",
	};
	it->kind = GT_EV_MEMCPY;
	it->stream = SIM_ST_COPY;
	it->sub = (uint8_t)sub;
	it->deps = (uint8_t)deps;
	it->evflags = evflags;
	if (evflags & GT_EVF_PAGEABLE)
		it->name = gt_store_intern_cstr(s, sub == GT_COPY_H2D ? "Memcpy HtoD (Pageable -> Device)"
							      : "Memcpy DtoH (Device -> Pageable)");
	else
		it->name = gt_store_intern_cstr(s, names[sub]);
	it->op = gt_store_intern_cstr(s, "aten::copy_");
	it->api = gt_store_intern_cstr(s, "cudaMemcpyAsync");
	it->api_ns = API_COPY_NS;
	it->arg = bytes;
	it->dur_ns = dur_ns;
}

/* an AllReduce bucket of dur_ns; a planted one lasts q_ns (0 while calibrating) */
static void pb_allreduce(struct pb *b, int64_t dur_ns, int planted)
{
	struct gt_sim *sim = b->sim;
	struct gt_store *s = sim->st;
	struct sim_item *it = pb_add(b);
	if (!it)
		return;
	struct gt_kconf kc = { { 32, 1, 1 }, { 640, 1, 1 }, 96, 0, 0, 6.2f };
	it->kind = GT_EV_KERNEL;
	it->stream = SIM_ST_NCCL;
	it->deps = SIM_DEP_COMPUTE;
	it->evflags = GT_EVF_NCCL;
	it->name = gt_store_intern_cstr(s, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
	it->op = gt_store_intern_cstr(s, "nccl:all_reduce");
	it->api = gt_store_intern_cstr(s, "cudaLaunchKernelExC");
	it->api_ns = API_NCCL_NS;
	it->arg = gt_store_kconf(s, &kc);
	if (planted) {
		it->flags = SIM_IT_PLANTED;
		dur_ns = sim->q_ns;
	}
	it->dur_ns = dur_ns;
	if (dur_ns <= 0)
		return;   /* calibration run: no size */
	/* algorithm bandwidth ~50 GB/s = 50 bytes/ns, fp32 */
	struct gt_nccl nc = { 0 };
	nc.collective = gt_store_intern_cstr(s, "allreduce");
	nc.dtype = gt_store_intern_cstr(s, "Float");
	nc.in_nelems = nc.out_nelems = (uint64_t)dur_ns * 50 / 4;
	nc.group_size = (uint32_t)(sim->o.gpus * sim->o.ranks);
	nc.dtype_bytes = 4;
	nc.pg_name = gt_store_intern_cstr(s, "0");
	it->arg |= (uint64_t)gt_store_nccl(s, &nc) << 32;
}

static int64_t sum_us(const struct kspec *k, size_t n)
{
	int64_t t = 0;
	for (size_t i = 0; i < n; i++)
		t += k[i].dur_us;
	return t;
}

/* multiply compute durations of items [from, p->n) by f */
static void scale_from(struct sim_plan *p, size_t from, double f)
{
	for (size_t i = from; i < p->n; i++)
		if (p->it[i].stream == SIM_ST_COMPUTE && p->it[i].kind == GT_EV_KERNEL)
			p->it[i].dur_ns = (int64_t)((double)p->it[i].dur_ns * f);
}

static void pb_offload(struct pb *b, int sub)
{
	/* pageable activation offload copies, serialized with compute */
	pb_copy(b, sub, 0, 0, SIM_DEP_COMPUTE, GT_EVF_PAGEABLE);
	if (b->err)
		return;
	struct sim_item *it = &b->p->it[b->p->n - 1];
	it->flags = SIM_IT_PLANTED;
	it->dur_ns = b->sim->q_ns / 8;
	it->arg = (uint64_t)it->dur_ns * 12;   /* pageable, ~12 GB/s */
	b->dep_next |= SIM_DEP_COPY;
}

int sim_plan_build(struct gt_sim *sim)
{
	struct sim_plan *p = &sim->plan;
	enum gt_sim_scenario sc = sim->o.scenario;
	struct pb b = { sim, p, 0, sc == GT_SIM_LAUNCH_BOUND, 0, { { 0 } } };
	int L = b.lb ? 90 : 8;
	p->n = 0;
	p->kernels = 0;
	sim_rng_seed(&b.rng, sim->o.seed ^ 0x5eed01a9ull);

	/* scale compute so that the one host thread stays ahead of G GPUs */
	double avg_us = (double)(sum_us(block_fw, NELEM(block_fw)) + sum_us(block_bw, NELEM(block_bw))) /
			(double)(NELEM(block_fw) + NELEM(block_bw));
	double scale = (double)sim->o.gpus * HOST_ITEM_NS / 1000.0 / (0.6 * avg_us);
	if (scale < 1.0 || b.lb)
		scale = 1.0;

	/* input batch: 6 MB pinned at 24 GB/s */
	uint64_t in_bytes = b.lb ? 64 * 1024 : 6u << 20;
	pb_copy(&b, GT_COPY_H2D, in_bytes, (int64_t)(in_bytes / 24), 0, GT_EVF_PINNED);
	b.dep_next = SIM_DEP_COPY;  /* the first kernel needs the input */
	size_t c0 = p->n;
	pb_kernels(&b, stem_fw, NELEM(stem_fw));
	for (int l = 0; l < L && !b.err; l++) {
		pb_kernels(&b, block_fw, NELEM(block_fw));
		if (sc == GT_SIM_COPY_HEAVY && l % 2 == 1)
			pb_offload(&b, GT_COPY_D2H);
	}
	pb_kernels(&b, head_fw, NELEM(head_fw));
	/* loss.item(): 4 bytes to the host */
	pb_copy(&b, GT_COPY_D2H, 4, 2000, SIM_DEP_COMPUTE, GT_EVF_PAGEABLE);
	pb_kernels(&b, head_bw, NELEM(head_bw));
	scale_from(p, c0, scale);

	/* backward with DDP buckets every quarter of the blocks */
	int64_t quarter_ns = (int64_t)((double)sum_us(block_bw, NELEM(block_bw)) * 1000.0 * scale *
				       (double)L / 4.0);
	int64_t bucket_ns = b.lb ? 20000 : quarter_ns * 35 / 100;
	int per_bucket = L / 4 > 0 ? L / 4 : 1;
	for (int l = L - 1; l >= 0 && !b.err; l--) {
		if (sc == GT_SIM_COPY_HEAVY && l % 2 == 1)
			pb_offload(&b, GT_COPY_H2D);
		size_t k0 = p->n;
		pb_kernels(&b, block_bw, NELEM(block_bw));
		scale_from(p, k0, scale);
		int done = L - l;
		if (sc != GT_SIM_COMM_BOUND && done % per_bucket == 0 && l > 0)
			pb_allreduce(&b, bucket_ns, 0);
	}
	size_t k0 = p->n;
	pb_kernels(&b, stem_bw, NELEM(stem_bw));
	scale_from(p, k0, scale);
	if (sc == GT_SIM_COMM_BOUND)
		pb_allreduce(&b, 0, 1);
	else
		pb_allreduce(&b, bucket_ns, 0);
	b.dep_next = SIM_DEP_NCCL;
	k0 = p->n;
	pb_kernels(&b, optim, NELEM(optim));
	scale_from(p, k0, scale);
	if (!b.lb && !b.err) {
		/* optimizer.zero_grad(set_to_none=False): 48 MB of gradients */
		struct sim_item *it = pb_add(&b);
		if (!it)
			return b.err;
		it->kind = GT_EV_MEMSET;
		it->stream = SIM_ST_COMPUTE;
		it->name = gt_store_intern_cstr(sim->st, "Memset (Device)");
		it->op = gt_store_intern_cstr(sim->st, "aten::zero_");
		it->api = gt_store_intern_cstr(sim->st, "cudaMemsetAsync");
		it->arg = 48u << 20;
		it->dur_ns = 18000;
	}
	return b.err;
}

void sim_plan_free(struct sim_plan *p)
{
	free(p->it);
	memset(p, 0, sizeof(*p));
}
