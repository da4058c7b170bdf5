package io.thermocline.proxy.mode;

import io.thermocline.tiering.mode.ModeController;

/**
 * What a proxy holds of the mode machinery: its gate (view, acknowledgements), the shadow comparator,
 * and the fleet's mode controller (every proxy runs one; compare-and-set makes them act as one).
 */
public record Modes(ModeGate gate, ShadowComparator shadow, ModeController controller) implements AutoCloseable {

    @Override
    public void close() {
        controller.close();
        shadow.flush();
        shadow.close();
        gate.close();
    }
}
