package it.calc;

import io.petrel.rpc.RpcService;

@RpcService("it.Calculator")
public interface Calculator {
  int add(int a, int b);

  long multiply(long a, long b);

  double average(double a, double b, double c);

  float half(float f);

  boolean not(boolean b);

  byte negate(byte b);

  short twice(short s);

  char upper(char c);

  String join(String a, char separator, String b);

  Integer orNull(Integer value, boolean returnNull);

  byte[] reverse(byte[] data);

  Unit next(Unit unit);

  int count();

  void reset();
}
