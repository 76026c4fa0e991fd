#!/usr/bin/env bash
# Builds the C subjects of eval/fuzz_compare.sh with afl-cc: cJSON 1.7.15 and json-c 0.16
# from Debian bookworm's sources (`apt-get source` through a private apt folder, so the
# machine's apt configuration is not touched), each with eval/targets/json_harness.c
# (reads the file named by argv[1] and parses it).
#
#   bash eval/build_c_subjects.sh DIR     -> DIR/cjson, DIR/json-c (skipped if present)
set -euo pipefail
dir=$(realpath -m "${1:?usage: build_c_subjects.sh DIR}")
harness=$(realpath "$(dirname "$0")/targets/json_harness.c")
mkdir -p "$dir"
[[ -x $dir/cjson && -x $dir/json-c ]] && exit 0
command -v afl-cc >/dev/null || { echo "afl-cc is missing (Debian: apt-get install afl++)" >&2; exit 1; }
apt="$dir/apt"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$dir/src"
echo "deb-src http://deb.debian.org/debian bookworm main" >"$apt/sources.list"
opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache")
apt-get "${opts[@]}" -qq update
(cd "$dir/src" && apt-get "${opts[@]}" -qq source --download-only cjson=1.7.15-1+deb12u4 json-c=0.16-2 2>&1 \
  | grep -v "unsandboxed" || true)
tar -C "$dir/src" -xzf "$dir/src/cjson_1.7.15.orig.tar.gz"
tar -C "$dir/src" -xzf "$dir/src/json-c_0.16.orig.tar.gz"

c=$dir/src/cJSON-1.7.15
AFL_QUIET=1 afl-cc -O1 -DUSE_CJSON -I"$c" -o "$dir/cjson" "$harness" "$c/cJSON.c" -lm

j=$(echo "$dir"/src/json-c-json-c-0.16-*)
# json-c's build wants cmake; its two generated headers for glibc on x86-64 instead.
cat >"$j/config.h" <<'C'
#define ENABLE_THREADING 0
#define HAVE_DLFCN_H 1
#define HAVE_ENDIAN_H 1
#define HAVE_FCNTL_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_LIMITS_H 1
#define HAVE_LOCALE_H 1
#define HAVE_MEMORY_H 1
#define HAVE_STDARG_H 1
#define HAVE_STDINT_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRINGS_H 1
#define HAVE_STRING_H 1
#define HAVE_SYSLOG_H 1
#define HAVE_SYS_CDEFS_H 1
#define HAVE_SYS_PARAM_H 1
#define HAVE_SYS_RANDOM_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_UNISTD_H 1
#define HAVE_ATOMIC_BUILTINS 1
#define HAVE_DECL_INFINITY 1
#define HAVE_DECL_ISINF 1
#define HAVE_DECL_ISNAN 1
#define HAVE_DECL_NAN 1
#define HAVE_OPEN 1
#define HAVE_REALLOC 1
#define HAVE_SETLOCALE 1
#define HAVE_SNPRINTF 1
#define HAVE_STRCASECMP 1
#define HAVE_STRDUP 1
#define HAVE_STRERROR 1
#define HAVE_STRNCASECMP 1
#define HAVE_USELOCALE 1
#define HAVE_VASPRINTF 1
#define HAVE_VPRINTF 1
#define HAVE_VSNPRINTF 1
#define HAVE_VSYSLOG 1
#define HAVE_GETRANDOM 1
#define HAVE_GETRUSAGE 1
#define HAVE_STRTOLL 1
#define HAVE_STRTOULL 1
#define HAVE___THREAD 1
#define JSON_C_HAVE_INTTYPES_H 1
#define PACKAGE "json-c"
#define PACKAGE_BUGREPORT "json-c@googlegroups.com"
#define PACKAGE_NAME "json-c"
#define PACKAGE_STRING "json-c 0.16.0"
#define PACKAGE_TARNAME "json-c"
#define PACKAGE_URL "https://github.com/json-c/json-c"
#define PACKAGE_VERSION "0.16.0"
#define SIZEOF_INT 4
#define SIZEOF_INT64_T 8
#define SIZEOF_LONG 8
#define SIZEOF_LONG_LONG 8
#define SIZEOF_SIZE_T 8
#define SIZEOF_SSIZE_T 8
#define SPEC___THREAD __thread
#define STDC_HEADERS 1
#define VERSION "0.16.0"
C
echo "#define JSON_C_HAVE_INTTYPES_H 1" >"$j/json_config.h"
sed -e 's/@JSON_H_JSON_POINTER@/#include "json_pointer.h"/' -e 's/@JSON_H_JSON_PATCH@//' \
  "$j/json.h.cmakein" >"$j/json.h"
srcs=()
for f in arraylist debug json_c_version json_object json_object_iterator json_pointer \
         json_tokener json_util json_visit linkhash printbuf random_seed strerror_override; do
  srcs+=("$j/$f.c")
done
AFL_QUIET=1 afl-cc -O1 -D_GNU_SOURCE -I"$j" -o "$dir/json-c" "$harness" "${srcs[@]}" -lm
echo "built $dir/cjson and $dir/json-c" >&2
