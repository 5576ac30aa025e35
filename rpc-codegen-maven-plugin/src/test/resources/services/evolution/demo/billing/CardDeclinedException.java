package demo.billing;

/** Package-private constructor: the generated BillingRpc, in this package, can still call it. */
public class CardDeclinedException extends Exception {
  private static final long serialVersionUID = 1L;

  CardDeclinedException(String message) {
    super(message);
  }
}
