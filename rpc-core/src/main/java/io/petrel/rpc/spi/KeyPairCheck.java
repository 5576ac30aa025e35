package io.petrel.rpc.spi;

import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;

/**
 * Whether a private key belongs to a certificate: signs a random value with the key and verifies it with the
 * certificate's public key. Used wherever TLS material is loaded (PEM files in the Netty transport, the Spring
 * starter's SSL bundles) to refuse a certificate and key replaced one at a time, with which every handshake would
 * fail, with a message saying so rather than a handshake error on each peer.
 */
public final class KeyPairCheck {
  /** What {@link #check} found. */
  public enum Result {
    /** The key signs what the certificate's public key verifies. */
    MATCHES,
    /** The key is not the certificate's (or of another kind, e.g. an EC key with an RSA certificate). */
    DIFFERENT,
    /** Not checked: a kind of key it does not sign with (e.g. RSASSA-PSS), or signing failed; the handshake tells. */
    UNKNOWN
  }

  private KeyPairCheck() {}

  /** Checks {@code key} against {@code cert}'s public key. */
  public static Result check(PrivateKey key, X509Certificate cert) {
    String family;
    String algorithm;
    if (key instanceof java.security.interfaces.RSAPrivateKey) {
      family = "RSA";
      algorithm = "SHA256withRSA";
    } else if (key instanceof java.security.interfaces.ECPrivateKey) {
      family = "EC";
      algorithm = "SHA256withECDSA";
    } else if (key instanceof java.security.interfaces.EdECPrivateKey) {
      family = "EdDSA";
      algorithm = "EdDSA";
    } else {
      return Result.UNKNOWN;
    }
    byte[] challenge = new byte[32];
    new SecureRandom().nextBytes(challenge);
    byte[] signature;
    try {
      // A reader may return another provider's key object (BouncyCastle's, when present): sign with the JDK's.
      PrivateKey jdkKey = KeyFactory.getInstance(family).generatePrivate(new PKCS8EncodedKeySpec(key.getEncoded()));
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(jdkKey);
      signer.update(challenge);
      signature = signer.sign();
    } catch (GeneralSecurityException | RuntimeException e) {
      return Result.UNKNOWN;
    }
    try {
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(cert.getPublicKey());
      verifier.update(challenge);
      return verifier.verify(signature) ? Result.MATCHES : Result.DIFFERENT;
    } catch (GeneralSecurityException | RuntimeException e) {
      return Result.DIFFERENT; // e.g. an EC key against an RSA certificate
    }
  }
}
