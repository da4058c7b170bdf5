package io.thermocline.embedded.changestream;

/** Server error codes used by change streams. */
final class ErrorCodes {
    static final int BAD_VALUE = 2;
    static final int ILLEGAL_OPERATION = 20;

    private ErrorCodes() {
    }
}
