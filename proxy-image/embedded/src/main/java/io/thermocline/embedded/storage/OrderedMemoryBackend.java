package io.thermocline.embedded.storage;

import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.Document;
import java.util.List;

/** mongo-java-server's in-memory backend with its non-unique indexes built ({@link SecondaryIndex}), as on disk. */
final class OrderedMemoryBackend extends MemoryBackend {

    @Override
    public MemoryDatabase openOrCreateDatabase(String databaseName) {
        return new IndexedDatabase(databaseName, getCursorRegistry());
    }

    private static final class IndexedDatabase extends MemoryDatabase {
        IndexedDatabase(String name, CursorRegistry cursors) {
            super(name, cursors);
        }

        @Override
        protected MemoryCollection openOrCreateCollection(String collectionName, CollectionOptions options) {
            return new IndexedCollection(this, collectionName, options, cursorRegistry);
        }

        /** The engine builds the index from the collection's documents when it adds it (a new index is empty). */
        @Override
        protected Index<Integer> openOrCreateSecondaryIndex(
                String collectionName, String indexName, List<IndexKey> keys, boolean sparse) {
            IndexKeyOrder order = SecondaryIndex.orderOf(keys);
            return new SecondaryIndex<>(indexName, keys, sparse, new MemoryIndexEntries(order), order);
        }
    }

    /** A collection whose documents an index walk reads by position. */
    private static final class IndexedCollection extends MemoryCollection implements PositionedDocuments {
        IndexedCollection(MemoryDatabase database, String name, CollectionOptions options, CursorRegistry cursors) {
            super(database, name, options, cursors);
        }

        @Override
        public Document documentAt(Object position) {
            return getDocument((Integer) position);
        }
    }
}
