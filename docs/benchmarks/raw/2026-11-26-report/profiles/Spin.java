public class Spin {
  public static void main(String[] a) {
    for (int r = 0; r < 5; r++) {
      long t = System.nanoTime();
      for (int i = 0; i < 200_000; i++) Thread.onSpinWait();
      long d = System.nanoTime() - t;
      System.out.printf("%.1f ns per onSpinWait%n", d / 200_000.0);
    }
  }
}
