#!/bin/bash
cd /work/main
for r in 1 2 3; do
  JAVA_OPTS=-Djmh.ignoreLock=true rpc-benchmarks/scripts/scale-java.sh -j /work/jars/850888c.jar -o /tmp/scale-java-r$r \
    -J "/usr/lib/jvm/java-17-openjdk-amd64 /opt/jdk21 /usr/lib/jvm/temurin-25-jdk-amd64" > /tmp/scale-java-r$r.log 2>&1
  echo "round $r exit $?" >> /tmp/javarun.done
done
