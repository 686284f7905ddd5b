# The example's test: LabelPreference changes where pods go, and bad args are refused.
#
#   cmake -DKSCHED=<ksched-label-preference> -DDIR=<examples/score-plugin> -P test/placements.cmake
#
# `simulate` runs the scheduler itself on test/cluster.yaml; the placements are read from
# its JSON output (docs/user-guide.md, "What if: ksched simulate").

# Runs `simulate` with the extra arguments; sets `placements` to "pod=node ..." and
# `status`/`stderr` to the exit code and error output.
function(simulate)
  execute_process(COMMAND ${KSCHED} simulate --cluster ${DIR}/test/cluster.yaml --pods ${DIR}/test/pods.yaml
                          -o json ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(result "")
  if(rc EQUAL 0)
    string(JSON count LENGTH "${out}" pods)
    math(EXPR last "${count} - 1")
    foreach(i RANGE ${last})
      string(JSON name GET "${out}" pods ${i} name)
      string(JSON node GET "${out}" pods ${i} node)
      list(APPEND result "${name}=${node}")
    endforeach()
  endif()
  list(JOIN result " " result)
  set(placements "${result}" PARENT_SCOPE)
  set(status "${rc}" PARENT_SCOPE)
  set(stderr "${err}" PARENT_SCOPE)
endfunction()

function(expect what got want)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "${what}: got \"${got}\", want \"${want}\"")
  endif()
  message(STATUS "${what}: ${got}")
endfunction()

# The default profile (no --config): the most room wins.
simulate()
expect("default profile" "${status} ${placements}" "0 web=node-big batch=node-big")

# LabelPreference at weight 5: web goes to the premium node; batch still fits only node-big.
simulate(--config ${DIR}/config.yaml)
expect("with LabelPreference" "${status} ${placements}" "0 web=node-premium batch=node-big")

# Bad args: bad input (exit 2), and the error names the plugin and the field.
foreach(bad bad-args:scores.premium negative-score:scores.premium)
  string(REPLACE ":" ";" bad "${bad}")
  list(GET bad 0 file)
  list(GET bad 1 field)
  simulate(--config ${DIR}/test/${file}.yaml)
  string(STRIP "${stderr}" stderr)
  if(NOT status EQUAL 2 OR NOT stderr MATCHES "plugin LabelPreference: .*${field}")
    message(FATAL_ERROR "${file}.yaml: want exit 2 and an error naming LabelPreference and ${field}, got "
                        "exit ${status}: ${stderr}")
  endif()
  message(STATUS "${file}.yaml refused: ${stderr}")
endforeach()
