package it.ledger;

/** A declared exception the stubs rethrow: made from the server's message. */
public class OverdrawnException extends Exception {
  private static final long serialVersionUID = 1L;

  public OverdrawnException(String message) {
    super(message);
  }
}
