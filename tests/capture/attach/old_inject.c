/* a libgtrace-inject.so of another gtrace version, for the refusal test:
 * only its identification string matters */
__attribute__((used)) static const char ident[] = "gtrace-inject-version=0.0.9";
int gtrace_inject_attach(void);
int gtrace_inject_attach(void)
{
	return 0;
}
