/*
 * ops_names.c - the name rules of the operator table: the PyTorch
 * TensorBoard plugin's Tensor Core lists (torch_tb_profiler tensor_core.py:
 * an operator allow-list, kernel name patterns) and the operators it keeps
 * out of its table (node.py is_operator_node, create_operator_node).
 */
#include <string.h>
#include "gtrace/ops.h"
#include "ops_priv.h"

/* the plugin's operator allow-list (torch_tb_profiler tensor_core.py) */
static const char *const tc_ops[] = {
	"aten::_convolution", "aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::conv_tbc",
	"aten::conv_transpose1d", "aten::conv_transpose2d", "aten::conv_transpose3d",
	"aten::convolution", "aten::cudnn_convolution", "aten::cudnn_convolution_transpose",
	"aten::prelu", "aten::addmm", "aten::addmv", "aten::addr", "aten::matmul", "aten::mm",
	"aten::mv", "aten::linear", "aten::addbmm", "aten::baddbmm", "aten::bmm",
	"aten::chain_matmul", "aten::linalg_multi_dot", "aten::_thnn_fused_lstm_cell",
	"aten::_thnn_fused_gru_cell", "aten::lstm_cell", "aten::gru_cell", "aten::rnn_tanh_cell",
	"aten::rnn_relu_cell", "CudnnConvolutionBackward", "BmmBackward0",
	"aten::cudnn_convolution_transpose_backward", "CudnnConvolutionTransposeBackward",
	"MmBackward", "aten::cudnn_convolution_backward_weight", "aten::addmm_", "AddmvBackward",
	"MvBackward", "aten::cudnn_convolution_transpose_backward_weight",
	"aten::cudnn_convolution_transpose_backward_input", "AddmmBackward",
	"aten::cudnn_convolution_backward_input", "AddbmmBackward",
	"aten::cudnn_convolution_backward", NULL
};

/* the plugin's Tensor Core kernel name patterns (substrings) */
static const char *const tc_kernels[] = {
	"h884", "s884", "h1688", "s1688", "hmma", "i8816", "16816", "dgrad_1x1_stride_2x2",
	"first_layer_wgrad_kernel", "conv1x1", "conv2d_c1_k1", "direct_group",
	"xmma_implicit_gemm", "xmma_sparse_conv", "xmma_warp_specialized_implicit_gemm",
	"xmma_gemm", "xmma_sparse_gemm", "c1688", NULL
};

int gt_ops_tc_op_name(const char *name)
{
	for (size_t i = 0; tc_ops[i]; i++)
		if (!strcmp(name, tc_ops[i]))
			return 1;
	return 0;
}

int gt_ops_tc_kernel_name(const char *name)
{
	for (size_t i = 0; tc_kernels[i]; i++)
		if (strstr(name, tc_kernels[i]))
			return 1;
	return 0;
}

static int has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static int has_suffix(const char *s, const char *x)
{
	size_t n = strlen(s), m = strlen(x);
	return n >= m && !strcmp(s + n - m, x);
}

int ops_excluded_name(const char *n)
{
	return has_prefix(n, "ProfilerStep#") || has_prefix(n, "Optimizer.") ||
	       (has_prefix(n, "enumerate(DataLoader)#") && has_suffix(n, ".__next__")) ||
	       has_prefix(n, "enumerate(DataPipe)#") || !strcmp(n, "DataParallel.forward") ||
	       !strcmp(n, "DistributedDataParallel.forward");
}
