package dev.kolo.checkpoint.internal.format;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {
    @Test
    void roundTripsValuesExactly() {
        String text = "{\"a\":[1,-2.50,3e10,true,false,null],\"b\":{\"c\":\"x\\\"y\\\\z\\n\\u00e9\\ud83d\\ude00\"},\"d\":[]}";
        Object v = Json.parse(text);
        assertEquals(text.replace("\\u00e9", "\u00e9").replace("\\ud83d\\ude00", "\ud83d\ude00"), Json.write(v));
        Map<String, Object> o = Json.object(v, "root");
        List<Object> a = Json.array(o.get("a"), "a");
        assertEquals(new Json.Num("-2.50"), a.get(1));
        assertEquals(3e10, ((Json.Num) a.get(2)).doubleValue());
        assertEquals(Json.NULL, a.get(5));
    }

    @Test
    void rejectsWhatIsNotStrictJson() {
        for (String bad : new String[] {"", "{", "[1,]", "{\"a\":1,}", "{\"a\":1,\"a\":2}", "01", "1.", "-", "1e",
                "'x'", "{a:1}", "[1] 2", "\"\u0001\"", "\"\\x\"", "\"\\ud800\"", "nul", "[1 2]", "// c\n1", "NaN",
                "\"abc"}) {
            Json.JsonException e = assertThrows(Json.JsonException.class, () -> Json.parse(bad), bad);
            assertTrue(e.getMessage().contains("character") || e.getMessage().contains("end of input"), e.getMessage());
        }
    }

    @Test
    void quotesControlCharactersAndKeepsUnicode() {
        StringBuilder sb = new StringBuilder();
        Json.quote(sb, "a\u0001b\tc\u00e9");
        assertEquals("\"a\\u0001b\\tc\u00e9\"", sb.toString());
        assertEquals("a\u0001b\tc\u00e9", Json.parse(sb.toString()));
    }

    @Test
    void rejectsDeepNesting() {
        String deep = "[".repeat(300) + "]".repeat(300);
        assertThrows(Json.JsonException.class, () -> Json.parse(deep));
    }
}
