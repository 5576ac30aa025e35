package chaos;

import io.petrel.rpc.Endpoint;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcClientBuilder;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.dns.DnsNameResolver;
import io.petrel.rpc.lb.OutlierEjection;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * ClientMain key=value ...: 16 callers (bounded by count and time) call read (idempotent) and write
 * (not idempotent) with a deadline, while scheduled shell commands inject and heal a fault; then prints the
 * outcome, a per-second timeline, the recovery time, and the server ledgers' check.
 */
public final class ClientMain {
  record Call(int caller, boolean write, String id, long startNs, long endNs, String outcome, boolean ok, String msg, long startEpochMs) {}

  public static void main(String[] args) throws Exception {
    Map<String, String> o = new HashMap<>();
    List<String[]> events = new ArrayList<>();
    for (String a : args) {
      int eq = a.indexOf('=');
      String k = a.substring(0, eq);
      String v = a.substring(eq + 1);
      if (k.equals("event")) {
        int c = v.indexOf(':');
        events.add(new String[] {v.substring(0, c), v.substring(c + 1)});
      } else {
        o.put(k, v);
      }
    }
    String phase = o.getOrDefault("phase", "p");
    int callers = Integer.parseInt(o.getOrDefault("callers", "16"));
    int maxCalls = Integer.parseInt(o.getOrDefault("maxCalls", "4000"));
    long durationMs = Long.parseLong(o.getOrDefault("duration", "30")) * 1000;
    long deadlineMs = Long.parseLong(o.getOrDefault("deadlineMs", "1000"));
    long thinkMs = Long.parseLong(o.getOrDefault("thinkMs", "5"));
    String victim = o.getOrDefault("victim", "s1");
    String ledgerDir = o.getOrDefault("ledgerDir", "/tmp/trial-chaos/run");

    RpcClientBuilder b = RpcClient.builder().name("chaos-client");
    if (o.containsKey("dns")) {
      // A DNS name whose lookup answers these addresses (as a DNS server listing them would).
      String[] ips = o.get("dns").split(",");
      DnsNameResolver dns = DnsNameResolver.builder("ledger.chaos", 7000).lookup(host -> {
        InetAddress[] r = new InetAddress[ips.length];
        for (int i = 0; i < ips.length; i++) {
          r[i] = InetAddress.getByName(ips[i]);
        }
        return r;
      }).build();
      b.nameResolver("dns:///ledger.chaos:7000", dns);
    } else {
      b.target(o.getOrDefault("target", "static://10.77.0.11:7000,10.77.0.12:7000,10.77.0.13:7000"));
    }
    String lb = o.getOrDefault("lb", "least_pending");
    if (Boolean.parseBoolean(o.getOrDefault("eject", "false"))) {
      b.loadBalancer(OutlierEjection.around(lb).build());
    } else {
      b.loadBalancer(lb);
    }
    if (o.containsKey("keepaliveMs")) {
      b.keepAliveTime(Duration.ofMillis(Long.parseLong(o.get("keepaliveMs"))));
    }
    RpcClient client = b.build();
    long t0 = System.nanoTime();
    if (Boolean.parseBoolean(o.getOrDefault("start", "true"))) {
      try {
        client.start();
      } catch (RuntimeException e) {
        System.out.println("start() threw " + e);
      }
    }
    System.out.printf("[%s] client %s, start=%s, lb=%s eject=%s keepalive=%s, %d callers x <=%d calls, <=%d s,"
        + " deadline %d ms%n", phase, o.getOrDefault("target", o.getOrDefault("dns", "static(3 live)")), o.getOrDefault("start", "true"), lb,
        o.getOrDefault("eject", "false"), o.getOrDefault("keepaliveMs", "default"), callers, maxCalls,
        durationMs / 1000, deadlineMs);
    var stub = LedgerRpc.stub(client).withDeadline(Duration.ofMillis(deadlineMs));
    ConcurrentLinkedQueue<Call> calls = new ConcurrentLinkedQueue<>();
    Map<String, List<String>> samples = new ConcurrentHashMap<>();
    AtomicInteger inCall = new AtomicInteger();
    long start = System.nanoTime();
    long endAt = start + durationMs * 1_000_000L;
    List<Thread> threads = new ArrayList<>();
    for (int c = 0; c < callers; c++) {
      int caller = c;
      Thread t = new Thread(() -> {
        for (int i = 0; i < maxCalls && System.nanoTime() < endAt; i++) {
          boolean write = (i & 1) == 1;
          String id = phase + "-" + caller + "-" + i;
          long s = System.nanoTime();
          long sEpoch = System.currentTimeMillis();
          String outcome;
          boolean ok;
          String msg = "";
          inCall.incrementAndGet();
          try {
            outcome = write ? stub.write(id) : stub.read(id);
            ok = true;
          } catch (StatusException e) {
            outcome = e.code().name();
            ok = false;
            String full = String.valueOf(e.getMessage()).replaceAll("[0-9]+", "N");
            msg = full.length() > 150 ? full.substring(0, 150) : full;
            List<String> l = samples.computeIfAbsent(outcome, k -> new java.util.concurrent.CopyOnWriteArrayList<>());
            if (l.size() < 4) {
              String m = String.valueOf(e.getMessage());
              String shortM = m.replaceAll("[0-9]+ ms", "N ms");
              if (l.stream().noneMatch(x -> x.replaceAll("[0-9]+ ms", "N ms").equals(shortM))) {
                l.add((write ? "write: " : "read: ") + (m.length() > 700 ? m.substring(0, 700) : m));
              }
            }
          } catch (Throwable e) {
            outcome = "EXCEPTION:" + e.getClass().getSimpleName();
            ok = false;
            samples.computeIfAbsent(outcome, k -> new java.util.concurrent.CopyOnWriteArrayList<>())
                .add(String.valueOf(e));
          } finally {
            inCall.decrementAndGet();
          }
          calls.add(new Call(caller, write, id, s, System.nanoTime(), outcome, ok, msg, sEpoch));
          if (thinkMs > 0) {
            try {
              Thread.sleep(thinkMs);
            } catch (InterruptedException e) {
              return;
            }
          }
        }
      }, "caller-" + c);
      t.setDaemon(true);
      threads.add(t);
      t.start();
    }
    // The fault schedule: event=SECONDS:shell command, run in order; the last one is the heal.
    Map<String, Long> eventAt = new LinkedHashMap<>();
    for (String[] e : events) {
      long at = start + (long) (Double.parseDouble(e[0]) * 1e9);
      while (System.nanoTime() < at) {
        Thread.sleep(5);
      }
      long before = System.nanoTime();
      Process p = new ProcessBuilder("sh", "-c", e[1]).inheritIO().start();
      p.waitFor();
      System.out.printf("[%s] t=%.2fs event: %s (exit %d, %d ms)%n", phase, (before - start) / 1e9, e[1],
          p.exitValue(), (System.nanoTime() - before) / 1_000_000);
      eventAt.put(e[1], before);
    }
    for (Thread t : threads) {
      t.join(Math.max(1, (endAt - System.nanoTime()) / 1_000_000 + deadlineMs + 5000));
    }
    long stillIn = threads.stream().filter(Thread::isAlive).count();
    long loadEnd = System.nanoTime();
    report(phase, victim, ledgerDir, deadlineMs, start, eventAt, new ArrayList<>(calls), samples, stillIn,
        inCall.get(), client);
    long sd = System.nanoTime();
    client.shutdownNow();
    boolean term = client.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS);
    System.out.printf("[%s] client terminated=%s in %d ms; load ran %.1f s; build->start %.0f ms%n", phase, term,
        (System.nanoTime() - sd) / 1_000_000, (loadEnd - start) / 1e9, (start - t0) / 1e6);
    System.exit(0);
  }

  static void report(String phase, String victim, String ledgerDir, long deadlineMs, long start,
      Map<String, Long> eventAt, List<Call> calls, Map<String, List<String>> samples, long stillIn, int inCall,
      RpcClient client) throws Exception {
    long faultAt = eventAt.isEmpty() ? Long.MAX_VALUE : eventAt.values().iterator().next();
    long healAt = eventAt.isEmpty() ? Long.MAX_VALUE : new ArrayList<>(eventAt.values()).get(eventAt.size() - 1);
    Map<String, Integer> byOutcome = new TreeMap<>();
    int ok = 0;
    int hung = 0;
    int late = 0;
    long maxMs = 0;
    int[][] win = new int[3][2];
    for (Call c : calls) {
      byOutcome.merge(c.ok ? "OK" : c.outcome, 1, Integer::sum);
      if (c.ok) {
        ok++;
      }
      long ms = (c.endNs - c.startNs) / 1_000_000;
      maxMs = Math.max(maxMs, ms);
      if (ms > deadlineMs + 1000) {
        hung++;
      }
      if (ms > deadlineMs + 50) {
        late++;
      }
      int w = c.startNs < faultAt ? 0 : c.startNs < healAt ? 1 : 2;
      win[w][c.ok ? 0 : 1]++;
    }
    Map<String, Integer> okByServer = new TreeMap<>();
    calls.stream().filter(Call::ok).forEach(c -> okByServer.merge(c.outcome, 1, Integer::sum));
    // Failures by kind: the message with digits blanked, cut at 150 characters; count and elapsed range.
    Map<String, long[]> kinds = new TreeMap<>();
    for (Call c : calls) {
      if (!c.ok) {
        long ms = (c.endNs - c.startNs) / 1_000_000;
        long[] k = kinds.computeIfAbsent((c.write ? "write " : "read ") + c.outcome + " | " + c.msg, x -> new long[] {0,
            Long.MAX_VALUE, 0});
        k[0]++;
        k[1] = Math.min(k[1], ms);
        k[2] = Math.max(k[2], ms);
      }
    }
    kinds.forEach((k, v) -> System.out.printf("[%s]   failure kind x%d (%d-%d ms): %s%n", phase, v[0], v[1], v[2], k));
    Map<String, Integer> failByCode = new TreeMap<>();
    calls.stream().filter(c -> !c.ok).forEach(c -> failByCode.merge((c.write ? "write " : "read ") + c.outcome, 1,
        Integer::sum));
    System.out.printf("[%s] calls %d: ok %d, failed %d %s; answered by %s%n", phase, calls.size(), ok,
        calls.size() - ok, failByCode, okByServer);
    System.out.printf("[%s] longest call %d ms; ended >%d ms after start (deadline+50ms) %d; hung past deadline+1s %d;"
        + " callers still in a call at the end %d (threads alive %d)%n", phase, maxMs, deadlineMs + 50, late, hung,
        inCall, stillIn);
    System.out.printf("[%s] windows (ok/failed): before fault %d/%d, during %d/%d, after heal %d/%d%n", phase,
        win[0][0], win[0][1], win[1][0], win[1][1], win[2][0], win[2][1]);
    samples.forEach((k, v) -> v.forEach(m -> System.out.printf("[%s]   sample %s: %s%n", phase, k, m)));
    // Timeline by second of call end.
    TreeMap<Long, int[]> tl = new TreeMap<>();
    for (Call c : calls) {
      long sec = (c.endNs - start) / 1_000_000_000L;
      int[] row = tl.computeIfAbsent(sec, k -> new int[6]);
      if (c.ok) {
        row[0]++;
        if (c.outcome.equals("s1")) {
          row[2]++;
        } else if (c.outcome.equals("s2")) {
          row[3]++;
        } else if (c.outcome.equals("s3")) {
          row[4]++;
        }
      } else {
        row[1]++;
      }
      row[5] = (int) Math.max(row[5], (c.endNs - c.startNs) / 1_000_000);
    }
    StringBuilder sb = new StringBuilder();
    tl.forEach((s, r) -> sb.append(String.format("%n[%s]   t=%2ds ok %4d fail %4d  s1 %4d s2 %4d s3 %4d  max %4d ms",
        phase, s, r[0], r[1], r[2], r[3], r[4], r[5])));
    System.out.println("[" + phase + "] timeline (by second a call ended):" + sb);
    if (healAt != Long.MAX_VALUE) {
      long firstVictimOk = calls.stream().filter(c -> c.ok && c.outcome.equals(victim) && c.startNs >= healAt)
          .mapToLong(c -> c.endNs - healAt).min().orElse(-1);
      long lastFail = calls.stream().filter(c -> !c.ok && c.endNs >= healAt).mapToLong(c -> c.endNs - healAt)
          .max().orElse(-1);
      long lastFailStartedAfterHeal = calls.stream().filter(c -> !c.ok && c.startNs >= healAt)
          .mapToLong(c -> c.endNs - healAt).max().orElse(-1);
      long okAfter = calls.stream().filter(c -> c.ok && c.startNs >= healAt).count();
      long victimAfter = calls.stream().filter(c -> c.ok && c.startNs >= healAt && c.outcome.equals(victim)).count();
      System.out.printf("[%s] recovery: first OK from %s (call started after heal) %s; last failure ending after"
          + " heal at +%d ms; last failure of a call started after heal at +%s ms; %s's share after heal %d/%d%n",
          phase, victim, firstVictimOk < 0 ? "never" : "+" + firstVictimOk / 1_000_000 + " ms", lastFail / 1_000_000,
          lastFailStartedAfterHeal < 0 ? "none" : String.valueOf(lastFailStartedAfterHeal / 1_000_000), victim,
          victimAfter, okAfter);
    }
    System.out.println("[" + phase + "] endpoint states at end: " + client.endpointStates());
    // Ledgers: wait a moment for servers to finish calls still running, then read them.
    Thread.sleep(1500);
    Map<String, Integer> wExec = new HashMap<>();
    Map<String, Integer> rExec = new HashMap<>();
    Map<String, Integer> execByServer = new TreeMap<>();
    Map<String, Long> wLastTs = new HashMap<>();
    try (var dir = Files.list(Path.of(ledgerDir))) {
      for (Path f : dir.filter(p -> p.getFileName().toString().startsWith("ledger-")).toList()) {
        String server = f.getFileName().toString().replace("ledger-", "").replace(".txt", "");
        for (String line : Files.readAllLines(f)) {
          String[] f3 = line.split(" ");
          if (f3.length < 3 || !f3[1].startsWith(phase + "-")) {
            continue;
          }
          (line.charAt(0) == 'W' ? wExec : rExec).merge(f3[1], 1, Integer::sum);
          if (line.charAt(0) == 'W') {
            wLastTs.merge(f3[1], Long.parseLong(f3[2]), Math::max);
          }
          execByServer.merge(server + (line.charAt(0) == 'W' ? ".write" : ".read"), 1, Integer::sum);
        }
      }
    }
    int wOk = 0;
    int wOkNoExec = 0;
    int wFailRan = 0;
    long maxLag = 0;
    int ranAfterDeadline = 0;
    int wFailNotRan = 0;
    int wIssued = 0;
    int rOkNoExec = 0;
    java.util.Set<String> issued = new java.util.HashSet<>();
    for (Call c : calls) {
      issued.add(c.id);
      if (!c.write) {
        if (c.ok && !rExec.containsKey(c.id)) {
          rOkNoExec++;
        }
        continue;
      }
      wIssued++;
      int n = wExec.getOrDefault(c.id, 0);
      if (c.ok) {
        wOk++;
        if (n == 0) {
          wOkNoExec++;
        }
      } else if (n > 0) {
        wFailRan++;
        long lag = wLastTs.get(c.id) - c.startEpochMs;
        maxLag = Math.max(maxLag, lag);
        if (lag > deadlineMs) {
          ranAfterDeadline++;
        }
      } else {
        wFailNotRan++;
      }
    }
    System.out.printf("[%s] failed writes that ran: %d ran after their deadline had passed (server clock, same host);"
        + " latest ran %d ms after the call started%n", phase, ranAfterDeadline, maxLag);
    long wDouble = wExec.values().stream().filter(n -> n > 1).count();
    long rDouble = rExec.values().stream().filter(n -> n > 1).count();
    long notIssued = wExec.keySet().stream().filter(id -> !issued.contains(id)).count();
    int wExecTotal = wExec.values().stream().mapToInt(Integer::intValue).sum();
    System.out.printf("[%s] ledger: writes issued %d, client OK %d, executions %d (distinct %d); write ids run twice+"
        + " %d; OK writes no server ran %d; failed writes that ran %d, failed that did not run %d; executions of ids"
        + " never issued %d; read ids run twice+ (retries, allowed) %d; OK reads no server ran %d; by server %s%n",
        phase, wIssued, wOk, wExecTotal, wExec.size(), wDouble, wOkNoExec, wFailRan, wFailNotRan, notIssued, rDouble,
        rOkNoExec, execByServer);
  }
}
