package chaos;

import io.petrel.rpc.RpcServer;
import java.io.FileOutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;

/** ServerMain NAME IP PORT LEDGER_FILE: serves chaos.Ledger; appends "W id" / "R id" per execution. */
public final class ServerMain {
  public static void main(String[] a) throws Exception {
    String name = a[0];
    Writer ledger = new OutputStreamWriter(new FileOutputStream(a[3], true), StandardCharsets.UTF_8);
    Object lock = new Object();
    Ledger impl = new Ledger() {
      @Override
      public String read(String id) {
        record("R " + id);
        return name;
      }

      @Override
      public String write(String id) {
        record("W " + id);
        return name;
      }

      private void record(String line) {
        synchronized (lock) {
          try {
            ledger.write(line + " " + System.currentTimeMillis());
            ledger.write('\n');
            ledger.flush();
          } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        }
      }
    };
    RpcServer server = RpcServer.builder().name(name).bindAddress(a[1], Integer.parseInt(a[2]))
        .addService(LedgerRpc.bind(impl)).build().start();
    System.out.println(name + " serving on " + server.address());
    Runtime.getRuntime().addShutdownHook(new Thread(server::close));
    Thread.currentThread().join();
  }
}
