package io.thermocline.proxy.auth;

import org.bson.BsonValue;

/**
 * How mongod reads a boolean-valued field, in the one place the proxy's authorization reads one: a
 * number is true unless zero ({@code remove: 1} deletes), as the IDL's {@code safeBool} and
 * {@code BSONElement::trueValue} take it; missing, null and undefined are false. Any other type mongod
 * either reads as true ({@code trueValue}) or refuses ({@code safeBool}'s TypeMismatch, at the backend): taking
 * it as true asks for the larger privilege, so a value the proxy reads differently can only fail closed.
 */
public final class MongoBooleans {
    private MongoBooleans() {
    }

    public static boolean isTrue(BsonValue value) {
        if (value == null || value.isNull()) {
            return false;
        }
        return switch (value.getBsonType()) {
            case BOOLEAN -> value.asBoolean().getValue();
            case INT32, INT64, DOUBLE -> value.asNumber().doubleValue() != 0;
            case DECIMAL128 -> value.asDecimal128().getValue().isNaN() || value.asDecimal128().getValue().isInfinite()
                    || value.asDecimal128().getValue().bigDecimalValue().signum() != 0;
            case UNDEFINED -> false;
            default -> true;
        };
    }
}
