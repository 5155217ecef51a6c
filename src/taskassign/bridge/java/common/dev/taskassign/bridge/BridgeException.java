package dev.taskassign.bridge;

/** Why the service's answer is not used for this rebalance: the message is the reason logged. */
public final class BridgeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public BridgeException(final String message) {
        super(message, null, false, false);
    }
}
