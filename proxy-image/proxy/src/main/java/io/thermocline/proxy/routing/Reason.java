package io.thermocline.proxy.routing;

/**
 * Why a command went where it went. The label is the {@code reason} value of the routing metrics and
 * the word {@code explain} prints, so labels are stable snake_case and never carry data.
 */
public enum Reason {
    // Reads
    AGE_BOUND_COVERED("age_bound_covered"),
    AGE_BOUND_BELOW_COVERAGE("age_bound_below_coverage"),
    NOTHING_COVERED("nothing_covered"),
    NO_AGE_BOUND("no_age_bound"),
    POINT_READ_BY_ID("point_read_by_id"),
    UNTIERED_NAMESPACE("untiered_namespace"),
    COVERAGE_CHANGED_DURING_READ("coverage_changed_during_read"),
    // Pipelines
    FOREIGN_NAMESPACE_UNTIERED("foreign_namespace_untiered"),
    FOREIGN_NAMESPACE_TIERED("foreign_namespace_tiered"),
    FOREIGN_NAMESPACE_NOT_PROVABLY_HOT("foreign_namespace_not_provably_hot"),
    OUTPUT_TO_UNTIERED_NAMESPACE("output_to_untiered_namespace"),
    OUTPUT_TO_TIERED_NAMESPACE("output_to_tiered_namespace"),
    CHANGE_STREAM_ON_FAST_TIER("change_stream_on_fast_tier"),
    CHANGE_STREAM_SPANS_TIERS("change_stream_spans_tiers"),
    STATISTICS_OF_ARCHIVE("statistics_of_archive"),
    NO_SOURCE_NAMESPACE("no_source_namespace"),
    // Writes
    INSERT_SERVER_ASSIGNS_ID("insert_server_assigns_id"),
    INSERT_ID_PROVABLY_HOT("insert_id_provably_hot"),
    INSERT_ID_MAY_BE_ARCHIVED("insert_id_may_be_archived"),
    POINT_WRITE_BY_ID("point_write_by_id"),
    UPSERT_WITH_EXPLICIT_ID("upsert_with_explicit_id"),
    PROVABLY_HOT_WRITE("provably_hot_write"),
    SINGLE_WRITE_NOT_PROVABLY_HOT("single_write_not_provably_hot"),
    MULTI_WRITE_NOT_PROVABLY_HOT("multi_write_not_provably_hot"),
    // Everything else
    DDL_ON_TIERED_NAMESPACE("ddl_on_tiered_namespace"),
    RENAME_OF_TIERED_NAMESPACE("rename_of_tiered_namespace"),
    CURSOR_OWNER("cursor_owner"),
    SESSION_COMMAND("session_command"),
    ANSWERED_BY_PROXY("answered_by_proxy"),
    ADMIN_ON_ARCHIVE("admin_on_archive"),
    ADMIN_OVER_BOTH_TIERS("admin_over_both_tiers"),
    UNKNOWN_COMMAND("unknown_command"),
    MALFORMED_COMMAND("malformed_command"),
    // Transactions
    TRANSACTION_STATEMENT_NOT_PROVABLY_HOT("transaction_statement_not_provably_hot"),
    TRANSACTION_SPANS_TIERS("transaction_spans_tiers"),
    TRANSACTION_PINNED_TIER("transaction_pinned_tier");

    private final String label;

    Reason(String label) {
        this.label = label;
    }

    /** The metric label value. */
    public String label() {
        return label;
    }
}
