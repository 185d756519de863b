# The platform layer: thread names as the kernel keeps them; a child process
# with its output passed through; the process tree read from /proc.
ofu_test(platform_test platform/thread_name_test.cc platform/child_process_test.cc)
target_link_libraries(platform_test PRIVATE ofu_platform)
