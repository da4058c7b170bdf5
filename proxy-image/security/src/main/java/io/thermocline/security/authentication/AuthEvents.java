package io.thermocline.security.authentication;

/** What authentication and authorization report for metrics: never a user name, password or payload. */
public interface AuthEvents {
    AuthEvents NONE = new AuthEvents() {
        @Override
        public void login(String mechanism, boolean succeeded) {
        }

        @Override
        public void throttled() {
        }

        @Override
        public void unauthorized(String command, boolean authenticated) {
        }
    };

    /** A login attempt ended (SASL conversation or x.509), by mechanism. */
    void login(String mechanism, boolean succeeded);

    /** A login attempt was delayed by the per-address bound on failed attempts. */
    void throttled();

    /** A command was refused with 13: before authentication, or for want of a privilege. */
    void unauthorized(String command, boolean authenticated);
}
