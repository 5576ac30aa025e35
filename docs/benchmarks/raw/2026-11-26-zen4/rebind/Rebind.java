import java.net.*; import java.util.concurrent.atomic.*;
public class Rebind { public static void main(String[] a) throws Exception {
  boolean join = a.length > 0; int port = 15000 + (int)(Math.random()*5000); int fails = 0;
  InetAddress lo = InetAddress.getLoopbackAddress();
  for (int i = 0; i < 2000; i++) {
    AtomicBoolean stop = new AtomicBoolean();
    ServerSocket down = new ServerSocket(); down.setReuseAddress(true); down.bind(new InetSocketAddress(lo, port), 50);
    Thread acc = new Thread(() -> { try { while (true) { Socket s = down.accept(); s.close(); } } catch (Exception e) {} });
    acc.start();
    Thread cl = new Thread(() -> { while (!stop.get()) { try (Socket c = new Socket()) { c.connect(new InetSocketAddress(lo, port), 100); } catch (Exception e) {} } });
    cl.start();
    Thread.sleep(2);
    down.close();
    if (join) acc.join();
    try (ServerSocket up = new ServerSocket()) { up.setReuseAddress(true); up.bind(new InetSocketAddress(lo, port), 50); }
    catch (BindException e) { fails++; }
    stop.set(true); cl.join(); acc.join();
  }
  System.out.println((join ? "join" : "nojoin") + " fails=" + fails);
}}
