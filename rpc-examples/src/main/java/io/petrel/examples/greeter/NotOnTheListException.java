package io.petrel.examples.greeter;

/**
 * Thrown by the server; the generated stub throws it to the caller again, with the message the server gave it
 * (its {@code (String)} constructor is what lets the stub rebuild it).
 */
public class NotOnTheListException extends Exception {
  private static final long serialVersionUID = 1L;

  public NotOnTheListException(String message) {
    super(message);
  }
}
