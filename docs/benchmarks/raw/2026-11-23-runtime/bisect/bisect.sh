#!/bin/bash
cd /tmp/bench3
for round in 1 2; do
for j in before:/tmp/bench/before-3e43f6b.jar s1:/tmp/bench3/jar-4436ff8.jar s2:/tmp/bench3/jar-a1e7c87.jar s3:/tmp/bench3/jar-7f57cc7.jar after:/tmp/bench3/after.jar; do
  tag=${j%%:*}; jar=${j#*:}
  java -jar $jar SyncCallBenchmark -p payload=MESSAGE -t 16 -wi 3 -w 4 -i 3 -r 4 -f 1 -bm thrpt -rf json \
    -p framework=PETREL,PETREL_DIRECT -rff bis-$tag-$round.json > bis-$tag-$round.log 2>&1
  echo "$(date +%T) $tag $round" >> bisect-progress.txt
done
done
echo "all done" >> bisect-progress.txt
