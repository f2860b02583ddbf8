package dev.kolo.testing;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * A real headless Chromium (Debian's {@code chromium} and {@code chromium-driver}) driven by Selenium, for the
 * status page's tests. Screenshots go to {@code target/status-screenshots/}, and also to the directory named by
 * {@code -Dkolo.screenshots=DIR} (how the ones in docs/ are taken).
 */
public final class HeadlessChromium implements AutoCloseable {
    private static final Path BROWSER = Path.of("/usr/bin/chromium");
    private static final Path DRIVER = Path.of("/usr/bin/chromedriver");

    public final WebDriver driver;

    private HeadlessChromium(WebDriver driver) {
        this.driver = driver;
    }

    /** Starts the browser with a window large enough for the whole page. */
    public static HeadlessChromium start() {
        if (!Files.isExecutable(BROWSER) || !Files.isExecutable(DRIVER)) {
            throw new AssertionError(BROWSER + " or " + DRIVER + " is missing: install Debian's chromium and "
                    + "chromium-driver (apt-get install chromium chromium-driver; .ci/run does)");
        }
        ChromeOptions options = new ChromeOptions();
        options.setBinary(BROWSER.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1700", "--hide-scrollbars");
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(DRIVER.toFile())
                .usingAnyFreePort().build();
        return new HeadlessChromium(new ChromeDriver(service, options));
    }

    /**
     * Waits up to {@code seconds} for {@code condition} to return a non-null, non-false value, and returns it. An
     * element the page replaced while the condition read it (the page redraws its rows at every event) counts as
     * not yet: the condition is tried again.
     */
    public <T> T await(double seconds, String what, Function<WebDriver, T> condition) {
        return new WebDriverWait(driver, Duration.ofMillis((long) (seconds * 1000))).withMessage(what)
                .pollingEvery(Duration.ofMillis(200)).ignoring(StaleElementReferenceException.class).until(condition);
    }

    public List<WebElement> all(String css) {
        return driver.findElements(By.cssSelector(css));
    }

    /** The integer in an element's attribute, 0 if the element or the attribute is missing. */
    public int intAttribute(String css, String attribute) {
        List<WebElement> found = all(css);
        String v = found.isEmpty() ? null : found.get(0).getAttribute(attribute);
        return v == null || v.isEmpty() ? 0 : Integer.parseInt(v);
    }

    /** Saves the page as {@code name}.png. */
    public Path screenshot(String name) throws IOException {
        File shot = ((TakesScreenshot) driver).getScreenshotAs(OutputType.FILE);
        Path out = Path.of("target", "status-screenshots", name + ".png");
        Files.createDirectories(out.getParent());
        Files.copy(shot.toPath(), out, StandardCopyOption.REPLACE_EXISTING);
        String docs = System.getProperty("kolo.screenshots");
        if (docs != null && !docs.isBlank()) {
            Path copy = Path.of(docs, name + ".png");
            Files.createDirectories(copy.getParent());
            Files.copy(shot.toPath(), copy, StandardCopyOption.REPLACE_EXISTING);
        }
        return out;
    }

    @Override
    public void close() {
        driver.quit();
    }
}
