# The platform layer: thread names as the kernel keeps them.
ofu_test(platform_test platform/thread_name_test.cc)
target_link_libraries(platform_test PRIVATE ofu_platform)
