# SPDX-License-Identifier: MIT
# ctest registration of the example programs. Included from tests/CMakeLists.txt after the
# definition of zt_add_sim_test() (examples/ is added before tests/, so examples/CMakeLists.txt
# cannot call it itself). Each program runs with its default arguments and verifies its results.

zt_add_sim_test(NAME example.vector_add_immediate COMMAND $<TARGET_FILE:ex_vector_add_immediate>
                LABELS examples)
zt_add_sim_test(NAME example.regular_list_repeat COMMAND $<TARGET_FILE:ex_regular_list_repeat>
                LABELS examples)
zt_add_sim_test(NAME example.ooo_events COMMAND $<TARGET_FILE:ex_ooo_events>
                LABELS examples)
zt_add_sim_test(NAME example.copy_engines COMMAND $<TARGET_FILE:ex_copy_engines>
                LABELS examples)
zt_add_sim_test(NAME example.multithread COMMAND $<TARGET_FILE:ex_multithread>
                LABELS examples tsan)
