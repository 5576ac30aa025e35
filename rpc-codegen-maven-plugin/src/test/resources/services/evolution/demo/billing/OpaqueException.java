package demo.billing;

/** Only a no-argument constructor: a stub cannot rebuild it with the message. */
public class OpaqueException extends Exception {
  private static final long serialVersionUID = 1L;

  public OpaqueException() {
    super("opaque");
  }
}
