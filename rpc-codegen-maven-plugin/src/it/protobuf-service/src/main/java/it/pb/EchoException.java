package it.pb;

public class EchoException extends Exception {
  private static final long serialVersionUID = 1L;

  public EchoException(String message) {
    super(message);
  }
}
