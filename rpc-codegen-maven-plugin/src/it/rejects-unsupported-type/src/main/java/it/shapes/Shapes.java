package it.shapes;

import io.petrel.rpc.RpcService;
import java.util.Set;

@RpcService("it.Shapes")
public interface Shapes {
  double distance(double x, double y);

  double area(Point corner, double width);

  Set<String> names();
}
