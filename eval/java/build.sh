#!/usr/bin/env bash
# Compiles eval/java/Subjects.java against Debian's jars into eval/java/classes and
# prints the classpath for `thicket --java thicket.subjects.Subjects.NAME --classpath CP`.
# Needs: default-jdk-headless libgoogle-gson-java libjackson2-core-java
# libjackson2-databind-java libjson-simple-java rhino libcssparser-java libcommons-csv-java
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
jars="${THICKET_JAVA_JARS:-/usr/share/java}"
cp=""
for j in gson jackson-core jackson-databind jackson-annotations json-simple js cssparser sac commons-csv; do
    if [ ! -e "$jars/$j.jar" ]; then
        echo "missing $jars/$j.jar (see the packages at the top of $0)" >&2
        exit 1
    fi
    cp="$cp:$jars/$j.jar"
done
cp="${cp#:}"
# --release 11: Debian's JaCoCo 0.8.6 instruments class files up to Java 16 (and 8 lacks
# org.w3c.dom.css, which cssparser needs).
javac --release 11 -nowarn -cp "$cp" -d "$here/classes" "$here/Subjects.java"
echo "$here/classes:$cp"
