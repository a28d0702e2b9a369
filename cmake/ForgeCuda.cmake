# Whether forge builds its CUDA path, and for which GPU architectures. The decisions are functions of their
# inputs only (no global state), so cmake/tests/test_forge_cuda.cmake checks them with made-up machines.
#
# FORGE_CUDA=AUTO builds the CUDA path when a CUDA compiler (nvcc) is found AND nvidia-smi lists a GPU: a
# machine without a GPU would spend most of its build time on kernels it cannot run. FORGE_CUDA=ON builds it
# wherever nvcc is found (packagers, login nodes of GPU clusters); OFF never.
#
# Default CMAKE_CUDA_ARCHITECTURES (unless given):
#   GPUs visible: machine code for each of them (compute capability 9.0 as sm_90a, which the wgmma coil-batch
#                 kernel needs), as CMake's "native" does; if nvcc cannot compile for one of them, the
#                 portable list below.
#   none visible: the portable list, one build of each code path plus PTX: 70-real (or 75-real where nvcc
#                 has no sm_70: CUDA 13 dropped Volta) for the FP32 batch kernel on Volta/Turing, 80-real for
#                 the mma.sync kernel on every 8.x GPU (sm_80 code runs on 8.6 and 8.9), 90a-real for wgmma on
#                 H100/H200, and compute_90 PTX, which the driver compiles for later GPUs (mma.sync).

# forge_cuda_visible_gpus(<smi> <out_names> <out_caps>): the GPUs nvidia-smi (<smi>, a path; empty: none)
# lists, as two lists: names and compute capabilities ("9.0"; "?" where this driver's nvidia-smi cannot tell).
# nvidia-smi exits non-zero ("No devices were found") where no GPU or driver is present.
function(forge_cuda_visible_gpus smi out_names out_caps)
  set(names "")
  set(caps "")
  if(smi)
    execute_process(COMMAND "${smi}" --query-gpu=name,compute_cap --format=csv,noheader
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_QUIET TIMEOUT 30)
    if(NOT rc EQUAL 0)
      # Drivers before compute_cap was a query field: the names only.
      execute_process(COMMAND "${smi}" --query-gpu=name --format=csv,noheader
                      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_QUIET TIMEOUT 30)
    endif()
    if(rc EQUAL 0)
      string(REPLACE ";" "," out "${out}")
      string(REPLACE "\n" ";" lines "${out}")
      foreach(line IN LISTS lines)
        string(STRIP "${line}" line)
        if(line STREQUAL "")
          continue()
        endif()
        if(line MATCHES "^(.*),[ ]*([0-9]+\\.[0-9]+)$")
          list(APPEND names "${CMAKE_MATCH_1}")
          list(APPEND caps "${CMAKE_MATCH_2}")
        else()
          list(APPEND names "${line}")
          list(APPEND caps "?")
        endif()
      endforeach()
    endif()
  endif()
  set(${out_names} "${names}" PARENT_SCOPE)
  set(${out_caps} "${caps}" PARENT_SCOPE)
endfunction()

# forge_cuda_decide(<mode> <nvcc> <gpu_names> <out_on> <out_reason>): <mode> AUTO, ON or OFF; <nvcc> the CUDA
# compiler's path (empty: none found); <gpu_names> the visible GPUs. Sets <out_on> to ON or OFF and
# <out_reason> to the sentence the configure summary prints. ON without nvcc is a fatal error.
function(forge_cuda_decide mode nvcc gpu_names out_on out_reason)
  list(LENGTH gpu_names ngpus)
  if(ngpus EQUAL 0)
    set(gpus "no GPU visible (nvidia-smi lists none)")
  else()
    list(JOIN gpu_names ", " joined)
    set(gpus "${ngpus} GPU(s) visible: ${joined}")
  endif()
  if(mode STREQUAL "OFF")
    set(on OFF)
    set(reason "FORGE_CUDA=OFF")
  elseif(mode STREQUAL "ON")
    if(NOT nvcc)
      message(FATAL_ERROR "FORGE_CUDA=ON but no CUDA compiler (nvcc) was found: install the CUDA toolkit, or pass "
                          "-DCMAKE_CUDA_COMPILER=/path/to/nvcc")
    endif()
    set(on ON)
    set(reason "FORGE_CUDA=ON, nvcc ${nvcc}; ${gpus}")
  elseif(mode STREQUAL "AUTO")
    if(NOT nvcc)
      set(on OFF)
      set(reason "FORGE_CUDA=AUTO: no CUDA compiler (nvcc) found")
    elseif(ngpus EQUAL 0)
      set(on OFF)
      set(reason "FORGE_CUDA=AUTO: nvcc found (${nvcc}) but ${gpus}; -DFORGE_CUDA=ON builds the CUDA path anyway")
    else()
      set(on ON)
      set(reason "FORGE_CUDA=AUTO: nvcc ${nvcc} and ${gpus}")
    endif()
  else()
    message(FATAL_ERROR "FORGE_CUDA must be AUTO, ON or OFF (got '${mode}')")
  endif()
  set(${out_on} ${on} PARENT_SCOPE)
  set(${out_reason} "${reason}" PARENT_SCOPE)
endfunction()

# forge_cuda_default_architectures(<gpu_caps> <nvcc_codes> <out_archs> <out_why>): the default
# CMAKE_CUDA_ARCHITECTURES for the visible GPUs' compute capabilities <gpu_caps> ("8.6", "?" unknown) and the
# machine codes nvcc compiles for, <nvcc_codes> (nvcc --list-gpu-code: sm_75;sm_80;...; empty: unknown, then
# sm_70 is assumed). <out_why> says which rule gave the list.
function(forge_cuda_default_architectures gpu_caps nvcc_codes out_archs out_why)
  if(nvcc_codes STREQUAL "" OR "sm_70" IN_LIST nvcc_codes)
    set(oldest 70)
  else()
    set(oldest 75)
  endif()
  string(REGEX REPLACE "^(.)(.)$" "\\1.\\2" oldest_cc "${oldest}")
  set(portable "${oldest}-real;80-real;90a-real;90-virtual")
  list(LENGTH gpu_caps ngpus)
  if(ngpus EQUAL 0)
    set(${out_archs} "${portable}" PARENT_SCOPE)
    set(${out_why} "no GPU visible: each code path for compute capability ${oldest_cc} and later, and compute_90 PTX"
        PARENT_SCOPE)
    return()
  endif()
  set(archs "")
  foreach(cap IN LISTS gpu_caps)
    if(NOT cap MATCHES "^([0-9]+)\\.([0-9]+)$")
      set(${out_archs} "${portable}" PARENT_SCOPE)
      set(${out_why} "this driver's nvidia-smi does not report compute capabilities: the portable list" PARENT_SCOPE)
      return()
    endif()
    set(code "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
    if(nvcc_codes AND NOT "sm_${code}" IN_LIST nvcc_codes)
      set(${out_archs} "${portable}" PARENT_SCOPE)
      set(${out_why} "nvcc cannot compile for the visible GPU's sm_${code}: the portable list" PARENT_SCOPE)
      return()
    endif()
    if(code STREQUAL "90")
      set(code "90a")  # Hopper's architecture-specific features (wgmma)
    endif()
    list(APPEND archs "${code}-real")
  endforeach()
  list(REMOVE_DUPLICATES archs)
  list(JOIN gpu_caps ", " caps)
  set(${out_archs} "${archs}" PARENT_SCOPE)
  set(${out_why} "the visible GPUs': compute capability ${caps}" PARENT_SCOPE)
endfunction()

# forge_cuda_compiler_codes(<nvcc> <out>): the machine codes <nvcc> compiles for (sm_XX list; empty when it
# cannot tell).
function(forge_cuda_compiler_codes nvcc out)
  execute_process(COMMAND "${nvcc}" --list-gpu-code RESULT_VARIABLE rc OUTPUT_VARIABLE codes ERROR_QUIET TIMEOUT 60)
  if(rc EQUAL 0)
    string(STRIP "${codes}" codes)
    string(REPLACE "\n" ";" codes "${codes}")
  else()
    set(codes "")
  endif()
  set(${out} "${codes}" PARENT_SCOPE)
endfunction()
