package io.petrel.examples.greeter;

/** Thrown by the server; the caller sees it as a StatusException whose description names this class. */
public class NotOnTheListException extends Exception {
  private static final long serialVersionUID = 1L;

  public NotOnTheListException(String message) {
    super(message);
  }
}
