// The fifteen Chomsky-hierarchy tasks of Delétang et al. (ICLR 2023), chomsky.md §1–4, by level:
// R (regular), DCF (deterministic context-free), CS (context-sensitive). Each is a TapeTask
// (tasks/tape.hpp) defined in its own file, named as the task.
#pragma once

#include "tasks/task.hpp"

namespace srbench::tasks {

// R
TaskInfo even_pairs_info();
TaskInfo modular_arithmetic_info();
TaskInfo parity_check_info();
TaskInfo cycle_navigation_info();
// DCF
TaskInfo stack_manipulation_info();
TaskInfo reverse_string_info();
TaskInfo modular_arithmetic_brackets_info();
TaskInfo solve_equation_info();
// CS
TaskInfo duplicate_string_info();
TaskInfo missing_duplicate_string_info();
TaskInfo odds_first_info();
TaskInfo binary_addition_info();
TaskInfo binary_multiplication_info();
TaskInfo compute_sqrt_info();
TaskInfo bucket_sort_info();

}  // namespace srbench::tasks
