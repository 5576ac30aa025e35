package io.petrel.spring.boot;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Injects a stub of the client {@code petrel.clients.<value>} into a field of a bean:
 *
 * <pre>{@code
 * @PetrelClient("greeter") Greeter greeter;               // blocking stub (GreeterRpc.stub)
 * @PetrelClient("greeter") GreeterAsync greeterAsync;     // GreeterRpc.asyncStub
 * @PetrelClient("greeter") RpcClient greeterClient;       // the shared client itself
 * }</pre>
 *
 * Every stub of one name shares that name's client. An unknown name or a type that is not a stub fails the
 * context's start with a message naming the field. For constructor injection, declare a {@code @Bean} with
 * {@link PetrelClients#stub(String, Class)}.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface PetrelClient {
  /** The client's name under {@code petrel.clients}. */
  String value();
}
