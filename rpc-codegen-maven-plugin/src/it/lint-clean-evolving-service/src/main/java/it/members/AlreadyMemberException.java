package it.members;

public class AlreadyMemberException extends Exception {
  private static final long serialVersionUID = 1L;

  public AlreadyMemberException(String message) {
    super(message);
  }
}
