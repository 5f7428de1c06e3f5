# Warnings are errors everywhere in our own code. GCC 12's -Wrestrict/-Wstringop-overflow/-Warray-bounds
# report false positives inside libstdc++'s std::string at -O2 (GCC bugs 105329, 105651), so those stay
# warnings, not errors. ZEROSIM_WERROR=OFF keeps the warnings but not as errors: the clang fuzz build
# (scripts/ci-fuzz.sh) uses it, since GCC is the compiler that gates warnings and clang has others.
option(ZEROSIM_WERROR "Treat compiler warnings as errors" ON)
function(zerosim_warnings target)
  if(ZEROSIM_WERROR)
    set(werror -Werror)
  endif()
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic ${werror}
      -Wno-error=restrict -Wno-restrict -Wno-error=stringop-overflow -Wno-error=array-bounds>)
endfunction()
