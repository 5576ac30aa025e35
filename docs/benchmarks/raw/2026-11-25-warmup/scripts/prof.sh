#!/bin/bash
# prof.sh FRAMEWORK THREADS TAG : runs JMH client against server on 7600; profiles server and client JVM for 8s mid-run
FW=$1; T=$2; TAG=$3; JAR=${JAR:-/tmp/bench/before.jar}
SP=$(jps -l | grep BenchmarkServer | awk '{print $1}')
cd /tmp/bench
java -Djmh.ignoreLock=true -jar $JAR SyncCallBenchmark -p host=127.0.0.1 -p port=7600 -p payload=MESSAGE -p framework=$FW -t $T -wi 3 -w 4 -i 3 -r 8 -f 1 -bm thrpt > prof-$TAG.log 2>&1 &
JP=$!
sleep 22
CP=$(jps -l | grep -i ForkedMain | head -1 | awk '{print $1}')
echo "client pid $CP server $SP"
jcmd $SP JVMTI.agent_load /tmp/ap/linux-x64/libasyncProfiler.so '"start,event=cpu,interval=1ms"' 2>&1 | grep -v "^[0-9]*:$"
jcmd $CP JVMTI.agent_load /tmp/ap/linux-x64/libasyncProfiler.so '"start,event=cpu,interval=1ms"' 2>&1 | grep -v "^[0-9]*:$"
sleep 8
jcmd $SP JVMTI.agent_load /tmp/ap/linux-x64/libasyncProfiler.so "\"stop,file=/tmp/bench/srv-$TAG.collapsed,collapsed\"" 2>&1 | grep -v "^[0-9]*:$"
jcmd $CP JVMTI.agent_load /tmp/ap/linux-x64/libasyncProfiler.so "\"stop,file=/tmp/bench/cli-$TAG.collapsed,collapsed\"" 2>&1 | grep -v "^[0-9]*:$"
wait $JP
grep -E "^Iteration|thrpt" prof-$TAG.log | tail -4
