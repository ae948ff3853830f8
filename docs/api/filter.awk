# Doxygen's input filter for include/strata/ (Doxyfile.in, FILTER_PATTERNS): the headers
# write their contracts as plain // comments, which Doxygen would skip. This makes them
# documentation without changing the headers:
#   - the comment that opens a header (before its first #) documents the file (\file);
#   - a comment on lines of its own documents the declaration after it (///);
#   - a comment after code on the same line documents that member (///<), and so do the
#     comment lines right under it that line up with it.
# Comments inside function bodies stay plain: they are the implementation's. The error
# table's helper macro, defined inside enum ErrorCode, is PREDEFINED in Doxyfile.in instead
# (defined in the enum, Doxygen would list it as a value).
function trailing_column(line) { return index(line, "//") }
/^#(define|undef) STRATA_ERROR_ENUM/ { print ""; next }
{
  line = $0
  if (line ~ /^#/) seen_code = 1
  if (!seen_code && line ~ /^\/\/ /) {
    if (!file_done) { print "/// \\file"; file_done = 1 }
    sub(/^\/\//, "///", line)
    print line
    next
  }
  if (line ~ /^[ \t]*\/\//) {  # a comment on a line of its own
    if (trail_col && trailing_column(line) == trail_col) {
      sub(/\/\//, "///<", line)
    } else {
      trail_col = 0
      if (depth_in_body == 0) sub(/\/\//, "///", line)
    }
    print line
    next
  }
  trail_col = 0
  # Track function bodies: a { that opens on a line ending in ) or const or noexcept etc.
  # is approximated by counting braces once a line has a "(" before its "{".
  if (depth_in_body > 0) {
    depth_in_body += gsub(/\{/, "{", line) - gsub(/\}/, "}", line)
    if (depth_in_body < 0) depth_in_body = 0
    print $0
    next
  }
  if (line ~ /\)[^;]*\{[^}]*$/ || line ~ /^[ \t]*\{[ \t]*$/ && prev ~ /\)[^;{]*$/) {
    depth_in_body = gsub(/\{/, "{", line) - gsub(/\}/, "}", line)
  }
  if (line ~ /[;,{][ \t]*\/\/ / && line !~ /"[^"]*\/\/[^"]*"/) {
    trail_col = trailing_column(line)
    sub(/[ \t]*\/\/ /, " ///< ", line)
    # The continuation lines line up with the comment's text as it was.
    trail_col = trailing_column($0)
  }
  prev = $0
  print line
}
