# Warnings are errors everywhere in our own code. GCC 12's -Wrestrict/-Wstringop-overflow/-Warray-bounds
# report false positives inside libstdc++'s std::string at -O2 (GCC bugs 105329, 105651), so those stay
# warnings, not errors.
function(zerosim_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Werror
      -Wno-error=restrict -Wno-restrict -Wno-error=stringop-overflow -Wno-error=array-bounds>)
endfunction()
