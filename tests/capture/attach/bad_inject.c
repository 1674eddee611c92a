/* a library whose dlopen fails in the target (RTLD_NOW: an undefined
 * symbol), with the entry gtrace looks for: the failed-call path */
void gtrace_test_nowhere_defined(void);
int gtrace_inject_attach(void);
int gtrace_inject_attach(void)
{
	gtrace_test_nowhere_defined();
	return 0;
}
